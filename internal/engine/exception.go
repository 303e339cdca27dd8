package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/exception"
	"github.com/tollgate-dev/tollgate/internal/labelrule"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// exemption is what PolicyExceptions lift of policy p for the request's
// object. It is the one place the engine asks, for every kind of policy,
// so every command applies exceptions alike.
func (e *Engine) exemption(p string, req *admission.Request, labels map[string]string) exception.Exemption {
	if !e.exceptions.Names(p) {
		return exception.Exemption{}
	}
	name := req.Name
	if name == "" {
		if m, _, err := metaOf(req); err == nil {
			name = m.Name
		}
	}
	return e.exceptions.Find(p, exception.Object{Kind: req.Kind.GroupKind(), Namespace: req.Namespace, Name: name, Labels: labels})
}

// exempted is the skip result of a policy an exception lifts.
func exempted(p string, ex *exception.Exception) Result {
	return Result{Policy: p, Outcome: Skip, Message: ex.Message(), Exception: ex.Name()}
}

// objectLabels are the labels of the request's object (oldObject's on
// DELETE), nil when it has none or cannot be read.
func objectLabels(req *admission.Request) map[string]string {
	m, _, err := metaOf(req)
	if err != nil {
		return nil
	}
	return m.Labels
}

// ruleExemption is what the exceptions lift of one tollgate policy's rules
// for one object, and which of them a verdict actually needed.
type ruleExemption struct {
	rules map[string]*exception.Exception // rule name -> exception
	used  []string                        // rules whose failure was lifted, in order
}

// exempts tells whether the rule named name is lifted, and notes its use.
func (x *ruleExemption) exempts(name string) bool {
	if x == nil || name == "" || x.rules[name] == nil {
		return false
	}
	if !slices.Contains(x.used, name) {
		x.used = append(x.used, name)
	}
	return true
}

// celVerdict drops from out the violations and errors of lifted rules.
func (x *ruleExemption) celVerdict(p *policy.Policy, out cel.Verdict) cel.Verdict {
	if x == nil {
		return out
	}
	exprs := p.Spec.Validate.Expressions
	name := func(i int) string {
		if i >= 0 && i < len(exprs) {
			return exprs[i].Name
		}
		return ""
	}
	out.Violations = slices.DeleteFunc(out.Violations, func(v cel.Violation) bool { return x.exempts(name(v.Rule)) })
	if len(out.RuleErrors) > 0 { // Err is the last of them, not a condition's nor the policy's
		out.RuleErrors = slices.DeleteFunc(out.RuleErrors, func(r cel.RuleError) bool { return x.exempts(name(r.Rule)) })
		out.Err = nil
		if n := len(out.RuleErrors); n > 0 {
			out.Err = out.RuleErrors[n-1].Err
		}
	}
	return out
}

// labelProblems are the label rules' problems, those of lifted rules left out.
func (x *ruleExemption) labelProblems(v *policy.Validate, labels map[string]string) []string {
	if x == nil {
		return labelrule.Problems(v, labels)
	}
	var out []string
	for _, rule := range v.Labels {
		problems := labelrule.Problems(&policy.Validate{Labels: []policy.LabelRule{rule}}, labels)
		if len(problems) > 0 && x.exempts(rule.Key) {
			continue
		}
		out = append(out, problems...)
	}
	return out
}

// apply marks r with the exceptions whose rules it needed: a result left
// with nothing else to report is a skip naming them; a failure keeps its
// remaining problems and names them too.
func (x *ruleExemption) apply(r Result) Result {
	if x == nil || len(x.used) == 0 {
		return r
	}
	notes := make([]string, 0, len(x.used))
	for _, rule := range x.used {
		ex := x.rules[rule]
		notes = append(notes, fmt.Sprintf("rule %s exempted by PolicyException %s: %s", rule, ex.Name(), ex.Spec.Reason))
	}
	note := strings.Join(notes, "; ")
	r.Exception = x.rules[x.used[0]].Name()
	if r.Outcome == Pass {
		r.Outcome, r.Message = Skip, note
		return r
	}
	r.Message += " (" + note + ")"
	return r
}
