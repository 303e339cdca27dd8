package cel

import (
	"strings"
	"sync"

	"github.com/google/cel-go/common/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
)

// frames are the direct evaluator's frames, reused: a frame is a few
// kilobytes.
var frames = sync.Pool{New: func() any { return new(dframe) }}

// decideDirect is the fast path's evaluation of a policy with the direct
// evaluator (direct.go), for the verdict q; admits: every rule true. Not
// decided when it cannot (a
// rule without a plan, an object given other than as JSON, an evaluation
// it gives up on, a rule that is no bool, a bound that does not hold with
// the variables' values): then cel-go's programs decide. Otherwise the
// validator's decisions: every rule's value, and for each false one the
// message the validator words from its message expression's value.
//
// Why they are the validator's: the values are cel-go's (TestDirectAsCEL);
// the bound (q bounded, or rulesBounded and bounded again with the sizes
// of the values of the variables the rules read) proves that no
// expression, the message expressions included, reaches the per-call
// limit and that the policy cannot reach the budget, so cost cannot turn
// any value into an error; a message expression's runtime error only
// makes the validator fall back to the rule's message, and the direct
// evaluator gives up (not decided) where cel-go could fail.
func (p *Program) decideDirect(in *Input, fi *fastInput, q verdict) (decisions []validating.PolicyDecision, admits, decided bool) {
	fp := p.fast
	if fp.directRules == nil || (in.docs[0] == nil && in.Object != nil) || (in.docs[1] == nil && in.OldObject != nil) {
		return nil, false, false
	}
	f := frames.Get().(*dframe)
	f.in, f.plans, f.shared, f.base = in, fp.directVars, fi.direct, 0
	for i := range f.plans {
		f.vars[i] = dvar{}
	}
	decisions, decided = fp.admitted, true
	var denied []int
	for i, rule := range fp.directRules {
		v, ok := rule(f)
		if !ok || v.k != dBool || v.opt {
			decided = false
			break
		}
		if !v.b {
			denied = append(denied, i)
		}
	}
	if decided && q == rulesBounded {
		// The sizes of the variables' values (read as knownSizes reads
		// them of their CEL values), first their own, then with those
		// nested in them.
		known := func(walk bool) []known {
			ks := make([]known, len(p.variables))
			for i := range f.plans {
				if f.vars[i].state == 1 {
					ks[i] = f.vars[i].val.sizes(walk)
				}
			}
			return ks
		}
		decided = fp.refinedWith(p, fi.st, known(false)) || fp.refinedWith(p, fi.st, known(true))
	}
	if decided && len(denied) > 0 {
		decisions, decided = p.denials(f, denied)
	}
	f.in, f.plans, f.shared = nil, nil, nil
	frames.Put(f)
	return decisions, len(denied) == 0, decided
}

// denials are the decisions of a policy whose rules in denied are false
// and the others true, their messages evaluated in f; not decided when a
// message expression gives up.
func (p *Program) denials(f *dframe, denied []int) ([]validating.PolicyDecision, bool) {
	d := make([]validating.PolicyDecision, len(p.rules))
	copy(d, p.fast.admitted)
	for _, i := range denied {
		validation := p.rules[i].ExpressionAccessor.(*validating.ValidationCondition)
		var result *plugincel.EvaluationResult
		if m := p.fast.directMessages[i]; m != nil {
			v, ok := m(f)
			if !ok {
				return nil, false
			}
			if v.k == dString && !v.opt { // else the validator words no message of it
				// A copy: the value may be the review's bytes, which the
				// server reuses once it has answered.
				result = &plugincel.EvaluationResult{EvalResult: types.String(strings.Clone(v.s))}
			}
		} else if p.messages[i].ExpressionAccessor != nil {
			return nil, false // a message expression without a plan
		}
		d[i].Action, d[i].Evaluation = validating.ActionDeny, validating.EvalDeny
		d[i].Reason = metav1.StatusReasonInvalid
		if validation.Reason != nil {
			d[i].Reason = *validation.Reason
		}
		d[i].Message = denialMessage(validation, result)
	}
	return d, true
}
