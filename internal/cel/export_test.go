package cel

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/cel-go/common/types/ref"

	"github.com/tollgate-dev/tollgate/internal/cel/bound"
	"github.com/tollgate-dev/tollgate/internal/cel/fastpath"
	"github.com/tollgate-dev/tollgate/internal/cel/lazy"
)

// Count makes p count how the fast path decides its evaluations (a test
// hook: programs count nothing otherwise), and returns p.
func (p *Program) Count() *Program {
	p.counts = &counts{}
	return p
}

// FastAdmits is how many evaluations of p the fast path admitted since
// Count.
func (p *Program) FastAdmits() int64 {
	if p.counts == nil {
		return 0
	}
	return p.counts.admits.Load()
}

// Planned tells whether every expression of p was planned untracked.
func (p *Program) Planned() bool { return p.fast != nil }

// Check is what CheckFast found on one input.
type Check struct {
	// Bounded and Compared count the expressions whose bound was checked
	// and whose untracked result was compared.
	Bounded, Compared int
	// Qualifies: the policy's bound holds for the input's sizes.
	Qualifies bool
	// Refined counts the refined bounds checked.
	Refined  int
	Problems []string
	// Tightest is the least bound / cost of the expressions that cost
	// something (0 when none).
	Tightest float64
}

// CheckFast evaluates every variable, rule and message expression of p on
// in with the tracked programs, and requires: each bound (where given) at
// least the actual cost, the policy's total bound at least the total
// charged, and the untracked program's value and error the tracked one's
// (where the tracked one stayed under the per-call limit). The bounds are
// checked as the stats give them, and refined (costBounds with values)
// with the values of the variables the untracked rules evaluate, as the
// fast path refines them, and with every variable's value.
func (p *Program) CheckFast(ctx context.Context, in *Input) Check {
	var out Check
	if p.fast == nil {
		return out
	}
	st, ok := inputStats(in)
	if !ok {
		out.Problems = append(out.Problems, "no stats")
		return out
	}
	pb := p.fast.Bound()
	b := pb.Bounds(st, nil)
	out.Qualifies = b.OK && pb.Qualifies(st) == bound.Bounded
	r := in.values()
	if r.err != nil {
		return out
	}
	tracked := &policyEval{ctx: ctx, p: p, r: r, done: map[string]*varResult{}, shared: map[string]*varResult{}}
	fast := &policyEval{ctx: ctx, p: p, r: r, done: map[string]*varResult{}, shared: map[string]*varResult{}, untracked: true}
	tc, fc := tracked.newContext(), fast.newContext()
	// The rules alone, untracked, as the fast path runs them.
	rulesOnly := &policyEval{ctx: ctx, p: p, r: r, untracked: true, shared: map[string]*varResult{}}
	rc := rulesOnly.newContext()
	for _, u := range p.fast.Rules() {
		_, _ = u.Eval(rc.act)
	}
	type charged struct {
		what  string
		cost  uint64
		times float64
		bound func(bound.Bounds) float64
	}
	var costs []charged
	compare := func(what string, cost uint64, val ref.Val, err error, fastEval func() (ref.Val, error)) {
		if cost > 1000000 || err != nil && err.Error() == "operation cancelled: actual cost limit exceeded" {
			return
		}
		fv, ferr := fastEval()
		if errors.Is(ferr, fastpath.ErrOffPath) {
			return // the fast path leaves: no value to compare
		}
		out.Compared++
		if !fastpath.SameResult(val, err, fv, ferr) {
			out.Problems = append(out.Problems, fmt.Sprintf("%s: untracked gives %v, %v; tracked %v, %v", what, fv, ferr, val, err))
		}
	}
	for _, v := range p.variables {
		tc.resolve(v)
		res := tracked.done[v.name]
		name := v.name
		costs = append(costs, charged{"variable " + name, uint64(res.cost), 2, func(b bound.Bounds) float64 { return b.Vars[name] }})
		compare("variable "+name, uint64(res.cost), res.val, res.err, func() (ref.Val, error) {
			fc.resolve(v)
			f := fast.done[v.name]
			return f.val, f.err
		})
	}
	for i, res := range p.rules {
		val, det, err := res.Program.ContextEval(ctx, tc.act)
		u := p.fast.Rules()[i]
		costs = append(costs, charged{fmt.Sprintf("rule %d", i), *det.ActualCost(), 1, func(b bound.Bounds) float64 { return b.Rules[i] }})
		compare(fmt.Sprintf("rule %d", i), *det.ActualCost(), val, err, func() (ref.Val, error) { return u.Eval(fc.act) })
	}
	for i, res := range p.messages {
		if res.Program == nil {
			continue
		}
		val, det, err := res.Program.ContextEval(ctx, tc.act)
		u := p.fast.Messages()[i]
		costs = append(costs, charged{fmt.Sprintf("message %d", i), *det.ActualCost(), 1, func(b bound.Bounds) float64 { return b.Messages[i] }})
		compare(fmt.Sprintf("message %d", i), *det.ActualCost(), val, err, func() (ref.Val, error) { return u.Eval(fc.act) })
	}
	check := func(how string, b bound.Bounds) {
		var total float64
		allBounded := true
		for _, c := range costs {
			total += c.times * float64(c.cost)
			bound := c.bound(b)
			if bound < 0 {
				allBounded = false
				continue
			}
			out.Bounded++
			if r := bound / float64(c.cost); c.cost > 0 && (out.Tightest == 0 || r < out.Tightest) {
				out.Tightest = r
			}
			if float64(c.cost) > bound {
				out.Problems = append(out.Problems, fmt.Sprintf("%s: cost %d over its %s bound %.0f (stats %+v)", c.what, c.cost, how, bound, st))
			}
		}
		if allBounded && total > b.Total {
			out.Problems = append(out.Problems, fmt.Sprintf("total cost %.0f over the policy's %s bound %.0f", total, how, b.Total))
		}
	}
	if fc.act.offPath || rc.act.offPath {
		// A guarded receiver was not a string: the fast path would leave;
		// the bounds assume it was.
		return out
	}
	check("static", b)
	if !rulesOnly.failed {
		check("refined", pb.Bounds(st, p.knownSizes(rulesOnly.done, false)))
		check("refined and walked", pb.Bounds(st, p.knownSizes(rulesOnly.done, true)))
		out.Refined += 2
	}
	if !fast.failed {
		check("every-value", pb.Bounds(st, p.knownSizes(fast.done, true)))
		out.Refined++
	}
	return out
}

// DirectCheck is what CheckDirect found on one input.
type DirectCheck = fastpath.DirectCheck

// CheckDirect evaluates every variable, rule and message expression of p
// that the direct evaluator has a plan for, on in, both with it and with
// its untracked cel-go program (fastpath.Policy.CheckDirect), the
// untracked ones in this package's activation.
func (p *Program) CheckDirect(in *Input) DirectCheck {
	if p.fast == nil {
		return DirectCheck{}
	}
	r := in.values()
	fi := in.fastInput()
	if r.err != nil || fi.review.Decoded {
		return DirectCheck{}
	}
	fast := &policyEval{ctx: context.Background(), p: p, r: r, done: map[string]*varResult{}, shared: map[string]*varResult{}, untracked: true}
	fc := fast.newContext()
	review := fi.review // its own caches
	return p.fast.CheckDirect(&review, lazy.NewValues(), fc.act, func(i int) (ref.Val, error) {
		v := p.variables[i]
		fc.resolve(v)
		f := fast.done[v.name]
		return f.val, f.err
	})
}

// Log2Up is bound.Log2Up.
var Log2Up = bound.Log2Up

// Direct tells whether every rule of p has a plan for the direct
// evaluator, which the fast path then uses.
func (p *Program) Direct() bool { return p.fast != nil && p.fast.Direct() }

// DirectAdmits and DirectDenials are how many evaluations of p the
// direct evaluator admitted and denied since Count.
func (p *Program) DirectAdmits() int64 {
	if p.counts == nil {
		return 0
	}
	return p.counts.direct.Load()
}

func (p *Program) DirectDenials() int64 {
	if p.counts == nil {
		return 0
	}
	return p.counts.denials.Load()
}
