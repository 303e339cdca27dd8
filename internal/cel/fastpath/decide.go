package fastpath

import (
	"strings"
	"sync"

	"github.com/tollgate-dev/tollgate/internal/cel/bound"
)

// frames are the direct evaluator's frames, reused: a frame is a few
// kilobytes.
var frames = sync.Pool{New: func() any { return new(dframe) }}

// decideDirect is the fast path's evaluation of a policy with the direct
// evaluator (direct.go), for the verdict q: the false rules, none when
// every rule is true. Not decided when it cannot (a rule without a plan,
// an object given other than as JSON, an evaluation it gives up on, a
// rule that is no bool, a bound that does not hold with the variables'
// values): then cel-go's programs decide. Otherwise the validator's
// decisions: every rule's value, and for each false one its message
// expression's value, from which the validator words its message.
//
// Why they are the validator's: the values are cel-go's (TestDirectAsCEL);
// the bound (q Bounded, or RulesBounded and bounded again with the sizes
// of the values of the variables the rules read) proves that no
// expression, the message expressions included, reaches the per-call
// limit and that the policy cannot reach the budget, so cost cannot turn
// any value into an error; a message expression's runtime error only
// makes the validator fall back to the rule's message, and the direct
// evaluator gives up (not decided) where cel-go could fail.
func (p *Policy) decideDirect(r *Review, q bound.Verdict) (denied []Denial, decided bool) {
	if p.directRules == nil || r.Decoded {
		return nil, false
	}
	if r.direct == nil {
		r.direct = map[string]dval{}
	}
	f := frames.Get().(*dframe)
	f.r, f.plans, f.shared, f.base = r, p.directVars, r.direct, 0
	for i := range f.plans {
		f.vars[i] = dvar{}
	}
	decided = true
	var falses []int
	for i, rule := range p.directRules {
		v, ok := rule(f)
		if !ok || v.k != dBool || v.opt {
			decided = false
			break
		}
		if !v.b {
			falses = append(falses, i)
		}
	}
	if decided && q == bound.RulesBounded {
		// The sizes of the variables' values (read as bound.ValueSizes
		// reads them of their CEL values), first their own, then with
		// those nested in them.
		known := func(walk bool) []bound.Known {
			ks := make([]bound.Known, len(f.plans))
			for i := range f.plans {
				if f.vars[i].state == 1 {
					ks[i] = f.vars[i].val.sizes(walk)
				}
			}
			return ks
		}
		decided = p.bound.Refined(r.Stats, known(false)) || p.bound.Refined(r.Stats, known(true))
	}
	if decided && len(falses) > 0 {
		denied, decided = p.denials(f, falses)
	}
	f.r, f.plans, f.shared = nil, nil, nil
	frames.Put(f)
	return denied, decided
}

// denials are the denials of the rules in falses, their message
// expressions evaluated in f; not decided when a message expression
// gives up.
func (p *Policy) denials(f *dframe, falses []int) ([]Denial, bool) {
	out := make([]Denial, len(falses))
	for j, i := range falses {
		out[j].Rule = i
		if m := p.directMessages[i]; m != nil {
			v, ok := m(f)
			if !ok {
				return nil, false
			}
			if v.k == dString && !v.opt { // else the validator words no message of it
				// A copy: the value may be the review's bytes, which the
				// server reuses once it has answered.
				out[j].Message, out[j].HasMessage = strings.Clone(v.s), true
			}
		} else if p.messages[i] != nil {
			return nil, false // a message expression without a plan
		}
	}
	return out, true
}
