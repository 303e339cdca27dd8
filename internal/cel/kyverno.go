package cel

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/environment"

	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// CompileKyverno compiles a ValidatingAdmissionPolicy made of a Kyverno
// ValidatingPolicy with the apiserver's compiler in the apiserver's
// environment extended with what Kyverno's environment has beyond it
// (github.com/kyverno/kyverno at 111e07bb, pkg/cel/compiler/env.go,
// DefaultEnvOptionsWithCompat): cel-go's bindings (cel.bind), encoders
// (base64), math, protos and regex extensions, numeric comparisons across
// types, and orValue on a value that is not optional giving the value, as
// cel-go before v0.28 did. Of Kyverno's own libraries, only resource.Get
// and resource.List are there, for a policy that calls them (res, see
// kyvernoresource.go): the compiled policy reads no store until ForStore
// gives it one.
//
// Its matchConditions are compiled apart, as the validations of Conditions,
// because Kyverno evaluates them with namespaceObject, which the
// apiserver's matcher leaves null (see Conditions).
//
// exceptionsParam says the policy's expressions read Kyverno's exceptions
// variable, renamed params (RenameIdent): the evaluator passes the
// exceptions' values as the policy's param, declared for every expression.
func CompileKyverno(vap *admissionregistrationv1.ValidatingAdmissionPolicy, exceptionsParam bool, res *KyvernoResources) (*VAP, field.ErrorList) {
	compiled, errs := compileKyverno(vap, exceptionsParam, res, nil)
	for _, e := range errs { // the compiler names the functions resource.Get and resource.List are rewritten to
		e.Detail = strings.NewReplacer(kyvernoGetFunction, "resource.Get", kyvernoListFunction, "resource.List", "'(kubernetes.AdmissionRequest, ", "'(").Replace(e.Detail)
	}
	if len(errs) > 0 || res == nil || len(res.Resources) == 0 {
		return compiled, errs
	}
	compiled.kyverno = &kyvernoBound{compile: func(store *refs.Store) (*VAP, error) {
		c, errs := compileKyverno(vap, exceptionsParam, res, store)
		if len(errs) > 0 {
			return nil, fmt.Errorf("policy %s compiled with the store of referenced objects: %w", vap.Name, errs.ToAggregate())
		}
		return c, nil
	}}
	return compiled, nil
}

// compileKyverno is CompileKyverno with Kyverno's resource library, when
// the policy calls it, reading store.
func compileKyverno(vap *admissionregistrationv1.ValidatingAdmissionPolicy, exceptionsParam bool, res *KyvernoResources, store *refs.Store) (*VAP, field.ErrorList) {
	var lib *kyvernoStore
	if res != nil && len(res.Resources) > 0 {
		lib = &kyvernoStore{res: res, store: store}
	}
	envs, err := kyvernoEnv(lib)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), fmt.Errorf("the CEL environment of Kyverno policies: %w", err))}
	}
	bare := vap.DeepCopy()
	bare.Spec.MatchConditions = nil
	compiled, errs := compileVAP(bare, envs, exceptionsParam)
	conditions, cerrs := kyvernoConditions(vap.Name, vap.Spec.MatchConditions, *vap.Spec.FailurePolicy, envs, exceptionsParam)
	errs = append(cerrs, errs...)
	if len(errs) > 0 {
		return nil, errs
	}
	compiled.Conditions = conditions
	compiled.Messages, errs = kyvernoMessages(vap, envs, exceptionsParam)
	if len(errs) > 0 {
		return nil, errs
	}
	return compiled, nil
}

// kyvernoMessageSentinel is the message of kyvernoMessages' first
// validation, which the apiserver's evaluator falls back to when the
// messageExpression fails.
const kyvernoMessageSentinel = "tollgate: the messageExpression failed"

// kyvernoMessages compiles each validation's messageExpression M apart, as
// a policy with the validation's variables and two validations: one always
// false whose messageExpression is 'x' + base64.encode(bytes(M)), so that
// the evaluator's message is M's text exactly (it trims the text of a
// messageExpression, and falls back to the message for an empty, multi-line
// or failing one: Kyverno takes the text as it is), and one that evaluates
// M, so that its error is the decision's. Nil where a validation has no
// messageExpression.
func kyvernoMessages(vap *admissionregistrationv1.ValidatingAdmissionPolicy, envs *environment.EnvSet, params bool) ([]*VAP, field.ErrorList) {
	var out []*VAP
	for i, v := range vap.Spec.Validations {
		if v.MessageExpression == "" {
			continue
		}
		if out == nil {
			out = make([]*VAP, len(vap.Spec.Validations))
		}
		m := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		m.Name = vap.Name
		m.Spec.FailurePolicy = vap.Spec.FailurePolicy
		m.Spec.Variables = vap.Spec.Variables
		m.Spec.Validations = []admissionregistrationv1.Validation{
			{Expression: "false", Message: kyvernoMessageSentinel, MessageExpression: "'x' + base64.encode(bytes(" + v.MessageExpression + "))"},
			{Expression: "(" + v.MessageExpression + ") == (" + v.MessageExpression + ")"},
		}
		compiled, errs := compileVAP(m, envs, params)
		if len(errs) > 0 {
			for _, e := range errs {
				e.Field = fmt.Sprintf("spec.validations[%d].messageExpression", i)
			}
			return nil, errs
		}
		out[i] = compiled
	}
	return out, nil
}

// KyvernoMessage is the message of a failing validation with a
// messageExpression, as Kyverno words it (pkg/cel/policies/vpol/compiler/
// policy.go): the expression's text as it is; "failed to evaluate message
// expression: <cause>" when it fails; Kyverno's default for an empty text.
// res is the Validate of Messages[i].
func KyvernoMessage(res validating.ValidateResult, i int) string {
	if len(res.Decisions) == 2 {
		if text, ok := strings.CutPrefix(res.Decisions[0].Message, "x"); ok {
			if raw, err := base64.StdEncoding.DecodeString(text); err == nil {
				if len(raw) == 0 {
					return KyvernoDefaultMessage(i)
				}
				return string(raw)
			}
		}
		if d := res.Decisions[1]; d.Evaluation == validating.EvalError {
			cause := d.Message
			if _, after, ok := strings.Cut(cause, "' resulted in error: "); ok {
				cause = after
			}
			return "failed to evaluate message expression: " + KyvernoVariableCause(cause)
		}
	}
	return KyvernoDefaultMessage(i)
}

// compositedVariable is how the apiserver's evaluator wraps the error of a
// variable an expression reads (k8s.io/apiserver/pkg/admission/plugin/cel/
// composition.go); Kyverno's lazy variables pass the error on as it is.
var compositedVariable = regexp.MustCompile(`^composited variable "[^"]*" fails to evaluate: `)

// KyvernoVariableCause is an evaluation error as Kyverno words it: without
// the apiserver's words for each variable it went through.
func KyvernoVariableCause(cause string) string {
	for {
		loc := compositedVariable.FindStringIndex(cause)
		if loc == nil {
			return cause
		}
		cause = cause[loc[1]:]
	}
}

// KyvernoDefaultMessage is Kyverno's message for failing validation i
// without a message.
func KyvernoDefaultMessage(i int) string {
	return fmt.Sprintf("CEL expression validation failed at index %d", i)
}

// CompileKyvernoConditions compiles the matchConditions of a Kyverno
// PolicyException in Kyverno's environment (see Conditions).
func CompileKyvernoConditions(name string, conditions []admissionregistrationv1.MatchCondition, fp admissionregistrationv1.FailurePolicyType) (*VAP, field.ErrorList) {
	envs, err := kyvernoEnv(nil)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), fmt.Errorf("the CEL environment of Kyverno policies: %w", err))}
	}
	return kyvernoConditions(name, conditions, fp, envs, false)
}

// kyvernoConditions compiles match conditions as the validations of a
// ValidatingAdmissionPolicy named name, whose Validate gives one decision
// per condition, in order, with namespaceObject set; nil without conditions.
func kyvernoConditions(name string, conditions []admissionregistrationv1.MatchCondition, fp admissionregistrationv1.FailurePolicyType, envs *environment.EnvSet, params bool) (*VAP, field.ErrorList) {
	if len(conditions) == 0 {
		return nil, nil
	}
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	vap.Name = name
	vap.Spec.FailurePolicy = &fp
	for _, c := range conditions {
		vap.Spec.Validations = append(vap.Spec.Validations, admissionregistrationv1.Validation{Expression: c.Expression, Message: c.Name})
	}
	compiled, errs := compileVAP(vap, envs, params)
	for _, e := range errs { // spec.validations[i] is spec.matchConditions[i]
		e.Field = strings.Replace(e.Field, "spec.validations", "spec.matchConditions", 1)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	compiled.ConditionNames = make([]string, len(conditions))
	for i, c := range conditions {
		compiled.ConditionNames[i] = c.Name
	}
	return compiled, nil
}

// kyvernoEnv is Kyverno's environment, with its resource library on lib
// when a policy calls it.
func kyvernoEnv(lib *kyvernoStore) (*environment.EnvSet, error) {
	opts := []environment.VersionedOptions{{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions: []cel.EnvOption{
			cel.CrossTypeNumericComparisons(true),
			ext.Bindings(),
			ext.Encoders(),
			ext.Math(),
			ext.Protos(),
			ext.Regex(ext.RegexVersion(1)),
			cel.Macros(cel.ReceiverMacro("orValue", 1, orValueCompatMacro)),
			cel.Function("__orValueCompat__",
				cel.Overload("__orValueCompat___dyn_dyn", []*cel.Type{cel.DynType, cel.DynType}, cel.DynType,
					cel.BinaryBinding(orValueCompat))),
		},
	}}
	if lib != nil {
		opts = append(opts, kyvernoResourceOptions(lib))
	}
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(opts...)
}

// orValueCompatMacro rewrites x.orValue(y) to __orValueCompat__(x, y), as
// Kyverno's orValueCompatMacro does.
func orValueCompatMacro(eh cel.MacroExprFactory, target celast.Expr, args []celast.Expr) (celast.Expr, *cel.Error) {
	return eh.NewCall("__orValueCompat__", target, args[0]), nil
}

// orValueCompat is Kyverno's __orValueCompat__: an optional's value or y
// when it has none, y for an error, and any other value itself.
func orValueCompat(lhs, rhs ref.Val) ref.Val {
	switch v := lhs.(type) {
	case *types.Optional:
		if v.HasValue() {
			return v.GetValue()
		}
		return rhs
	case *types.Err:
		return rhs
	default:
		return lhs
	}
}
