// Package cel compiles and evaluates tollgate's CEL policies with the
// Kubernetes apiserver's own CEL libraries and ValidatingAdmissionPolicy
// validator: the same environment (lists, regex, url, quantity, ip, cidr,
// format, ...), the same variables (object, oldObject, request,
// namespaceObject, variables) and the same cost limits, so an expression
// means here exactly what it means in a ValidatingAdmissionPolicy.
// Everything is compiled once, when policies load.
package cel

import (
	"context"
	"fmt"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
	"github.com/tollgate-dev/tollgate/internal/cel/fastpath"
	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// Spec is the CEL part of a policy.
type Spec struct {
	// Name is the policy's, for messages.
	Name        string
	Conditions  []NamedExpression
	Variables   []NamedExpression
	Validations []Validation
	// References are the other objects the policy reads, declared: its
	// expressions read them as references.<name> (refvalue.go).
	References []*refs.Compiled
}

// ReferenceReads is what the spec's expressions (and its references'
// index keys) read of each declared reference's objects, by name.
func (s Spec) ReferenceReads() map[string]refs.Read {
	variables := make([]analysis.Variable, len(s.Variables))
	for i, v := range s.Variables {
		variables[i] = analysis.Variable{Name: v.Name, Expression: v.Expression}
	}
	var texts []string
	for _, v := range s.Validations {
		texts = append(texts, v.Expression, v.MessageExpression)
	}
	return analysis.ReferenceReads(s.References, variables, texts...)
}

// NamedExpression is a match condition or a variable.
type NamedExpression struct {
	Name       string
	Expression string
}

// Validation is one rule, as in a ValidatingAdmissionPolicy.
type Validation struct {
	Expression        string
	Message           string
	MessageExpression string
	Reason            string
}

// Program is a compiled Spec.
type Program struct {
	conditions matchconditions.Matcher
	// rules and messages are the validations' expressions and message
	// expressions (placeholders where a rule has none), and variables the
	// policy's, by name (the last of a name, as the apiserver keeps it) and
	// in order, for validate.
	rules, messages []plugincel.CompilationResult
	variables       []*variable
	byName          map[string]*variable
	spec            Spec
	path            *field.Path
	envs            *environment.EnvSet // compiled in; nil: the base environment
	apiserver       struct {
		once      sync.Once
		validator validating.Validator
	}
	// fast is the policy planned for the fast path (package fastpath),
	// nil when an expression could not be planned untracked (then the
	// tracked path always); admitted its decisions when every rule admits.
	fast     *fastpath.Policy
	admitted []validating.PolicyDecision
	// counts, when set (by tests only), counts how the fast path decided.
	counts *counts
}

// variable is the policy's variable of that name, nil if none.
func (p *Program) variable(name string) *variable { return p.byName[name] }

var fail = admissionregistrationv1.Fail

// Compile compiles every expression of spec, reporting each that does not
// compile with its field path (under path) and the compiler's message.
func Compile(spec Spec, path *field.Path) (*Program, field.ErrorList) {
	p, _, errs := compile(spec, path, nil)
	return p, errs
}

// compile compiles spec for validate in envs (nil: the apiserver's base
// environment), and returns the apiserver's validator of it, which
// EvaluateTracked runs.
func compile(spec Spec, path *field.Path, in *environment.EnvSet) (*Program, validating.Validator, field.ErrorList) {
	envs := in
	if envs == nil {
		envs = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	}
	if len(spec.References) > 0 {
		var err error
		if envs, err = envs.Extend(referenceOptions()); err != nil {
			return nil, nil, field.ErrorList{field.InternalError(path, err)}
		}
	}
	compiler, err := plugincel.NewCompositedCompiler(envs)
	if err != nil {
		return nil, nil, field.ErrorList{field.InternalError(path, err)}
	}
	// authorizer is declared as in a ValidatingAdmissionPolicy; tollgate binds
	// none yet, so an expression using it fails at evaluation (failurePolicy).
	decls := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	var errs field.ErrorList
	p := &Program{byName: map[string]*variable{}, spec: spec, path: path, envs: in}
	// every expression planned untracked; never with references, whose
	// lookups the fast path's bounds do not know
	planned := len(spec.References) == 0
	for i, v := range spec.Variables {
		res := compiler.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, decls, environment.StoredExpressions)
		if res.Error != nil {
			errs = append(errs, field.Invalid(path.Child("variables").Index(i).Child("expression"), v.Expression, res.Error.Detail))
		}
		cv := &variable{name: v.Name, result: res, independent: !analysis.Uses("variables", v.Expression) && !analysis.Uses("authorizer", v.Expression) &&
			!analysis.Uses(refs.Variable, v.Expression)}
		cv.untracked = fastpath.Plan(res)
		planned = planned && cv.untracked != nil
		if _, ok := p.byName[v.Name]; !ok {
			p.variables = append(p.variables, cv)
		} else {
			for j := range p.variables {
				if p.variables[j].name == v.Name {
					p.variables[j] = cv
				}
			}
		}
		p.byName[v.Name] = cv
	}
	// each compiles every expression as the apiserver's condition compiler
	// does, and plans it untracked for the fast path.
	each := func(accessors []plugincel.ExpressionAccessor, d plugincel.OptionalVariableDeclarations) ([]plugincel.CompilationResult, []*fastpath.Untracked) {
		out := make([]plugincel.CompilationResult, len(accessors))
		fast := make([]*fastpath.Untracked, len(accessors))
		for i, a := range accessors {
			if a != nil {
				out[i] = compiler.CompileCELExpression(a, d, environment.StoredExpressions)
				fast[i] = fastpath.Plan(out[i])
				planned = planned && fast[i] != nil
			}
		}
		return out, fast
	}
	compile := func(accessors []plugincel.ExpressionAccessor, what string, d plugincel.OptionalVariableDeclarations) plugincel.ConditionEvaluator {
		// Each expression alone first, so an error names its index and text.
		for i, a := range accessors {
			if a == nil {
				continue
			}
			for _, e := range compiler.CompileCondition([]plugincel.ExpressionAccessor{a}, d, environment.StoredExpressions).CompilationErrors() {
				errs = append(errs, field.Invalid(fieldOf(path, what, i), a.GetExpression(), e.Error()))
			}
		}
		return compiler.CompileCondition(accessors, d, environment.StoredExpressions)
	}
	if len(spec.Conditions) > 0 {
		acc := make([]plugincel.ExpressionAccessor, len(spec.Conditions))
		for i, c := range spec.Conditions {
			acc[i] = &matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression}
		}
		p.conditions = matchconditions.NewMatcher(compile(acc, "conditions", decls), &fail, "policy", "validate", spec.Name)
	}
	rules := make([]plugincel.ExpressionAccessor, len(spec.Validations))
	var messages []plugincel.ExpressionAccessor
	for i, v := range spec.Validations {
		rules[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: reasonOf(v.Reason)}
		// The validator pairs message expressions with rules by position.
		var m plugincel.ExpressionAccessor
		if v.MessageExpression != "" {
			m = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
		messages = append(messages, m)
	}
	validator := validating.NewValidator(
		compile(rules, "expressions", decls),
		nil,
		compile(nil, "auditAnnotations", decls),
		// As in a ValidatingAdmissionPolicy, message expressions see no authorizer.
		compile(messages, "messageExpression", plugincel.OptionalVariableDeclarations{}),
		&fail, nil)
	errs = append(errs, checkReferences(spec, path)...)
	if len(errs) > 0 {
		return nil, nil, errs
	}
	var fastRules, fastMessages []*fastpath.Untracked
	p.rules, fastRules = each(rules, decls)
	p.messages, fastMessages = each(messages, plugincel.OptionalVariableDeclarations{})
	if planned {
		vars := make([]fastpath.Var, len(p.variables))
		for i, v := range p.variables {
			vars[i] = fastpath.Var{Name: v.name, Text: v.result.ExpressionAccessor.GetExpression(), Independent: v.independent, Prog: v.untracked}
		}
		p.fast = fastpath.New(vars, fastRules, fastMessages)
		p.admitted = admitted(len(p.rules))
	}
	return p, validator, nil
}

// Verdict is what a program made of an input.
type Verdict struct {
	// Skipped: a condition was false; Unmet names it.
	Skipped bool
	Unmet   string
	// Violations are the failed rules, with their messages and reasons.
	Violations []Violation
	// Err is an evaluation error (a runtime error or the cost limit): a
	// condition's, the policy's as a whole, or the last of RuleErrors.
	Err error
	// RuleErrors are the rules that could not be evaluated.
	RuleErrors []RuleError
}

// Violation is one failed rule.
type Violation struct {
	Message string
	Reason  string
	// Rule is the rule's index in the policy's expressions.
	Rule int
}

// RuleError is a rule that could not be evaluated.
type RuleError struct {
	Rule int
	Err  error
}

// Evaluate runs the program. It never panics on a hostile object: errors
// and the cost budget are reported in Verdict.Err.
func (p *Program) Evaluate(ctx context.Context, in *Input) Verdict {
	return p.evaluate(ctx, in, p.validate)
}

// EvaluateTracked is Evaluate by the apiserver's own validator
// (validator.Validate, compiled on first use): what the tests
// hold Evaluate to.
func (p *Program) EvaluateTracked(ctx context.Context, in *Input) Verdict {
	p.apiserver.once.Do(func() { _, p.apiserver.validator, _ = compile(p.spec, p.path, p.envs) })
	return p.evaluate(ctx, in, func(ctx context.Context, in *Input) []validating.PolicyDecision {
		return p.apiserver.validator.Validate(ctx, in.Resource, in.versioned(), nil, in.NamespaceObject, celconfig.RuntimeCELCostBudget, nil).Decisions
	})
}

// evaluate runs the conditions, then decide.
func (p *Program) evaluate(ctx context.Context, in *Input, decide func(context.Context, *Input) []validating.PolicyDecision) Verdict {
	if p.conditions != nil {
		m := p.conditions.Match(ctx, in.versioned(), nil, nil)
		if m.Error != nil {
			return Verdict{Err: fmt.Errorf("condition %s: %w", m.FailedConditionName, m.Error)}
		}
		if !m.Matches {
			return Verdict{Skipped: true, Unmet: m.FailedConditionName}
		}
	}
	return verdictOf(decide(ctx, in), len(p.spec.Validations))
}

// verdictOf reads the decisions of a program's rules. There is one per
// rule, unless the policy as a whole could not be evaluated (its
// activation, or the cost budget before the rules ran): then a single
// error, which is no rule's and which no rule's exemption may drop.
func verdictOf(decisions []validating.PolicyDecision, rules int) Verdict {
	var out Verdict
	perRule := len(decisions) == rules
	for i, d := range decisions {
		switch {
		case d.Evaluation == validating.EvalError:
			out.Err = fmt.Errorf("%s", d.Message)
			if perRule {
				out.RuleErrors = append(out.RuleErrors, RuleError{Rule: i, Err: out.Err})
			}
		case d.Action == validating.ActionDeny:
			out.Violations = append(out.Violations, Violation{Message: d.Message, Reason: string(d.Reason), Rule: i})
		}
	}
	return out
}

// fieldOf is the policy field an expression came from.
func fieldOf(path *field.Path, what string, i int) *field.Path {
	switch what {
	case "conditions":
		return field.NewPath("spec", "match", "conditions").Index(i).Child("expression")
	case "messageExpression":
		return path.Child("expressions").Index(i).Child("messageExpression")
	default:
		return path.Child(what).Index(i).Child("expression")
	}
}

// reasonOf maps a rule's reason to a status reason; empty means Invalid,
// as in a ValidatingAdmissionPolicy.
func reasonOf(r string) *metav1.StatusReason {
	if r == "" {
		return nil
	}
	sr := metav1.StatusReason(r)
	return &sr
}
