package cel

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// FastAdmits is how many evaluations of p the fast path decided.
func (p *Program) FastAdmits() int64 {
	if p.fast == nil {
		return 0
	}
	return p.fast.admits.Load()
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
	b := p.costBounds(st, nil)
	out.Qualifies = b.ok && p.fast.qualifies(p, st) == bounded
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
	for _, u := range p.fast.rules {
		_, _ = u.eval(rc.act)
	}
	type charged struct {
		what  string
		cost  uint64
		times float64
		bound func(policyBounds) float64
	}
	var costs []charged
	compare := func(what string, cost uint64, val ref.Val, err error, fastEval func() (ref.Val, error)) {
		if cost > 1000000 || err != nil && err.Error() == "operation cancelled: actual cost limit exceeded" {
			return
		}
		fv, ferr := fastEval()
		if errors.Is(ferr, errOffPath) {
			return // the fast path leaves: no value to compare
		}
		out.Compared++
		if !sameResult(val, err, fv, ferr) {
			out.Problems = append(out.Problems, fmt.Sprintf("%s: untracked gives %v, %v; tracked %v, %v", what, fv, ferr, val, err))
		}
	}
	for _, v := range p.variables {
		tc.resolve(v)
		res := tracked.done[v.name]
		name := v.name
		costs = append(costs, charged{"variable " + name, uint64(res.cost), 2, func(b policyBounds) float64 { return b.vars[name] }})
		compare("variable "+name, uint64(res.cost), res.val, res.err, func() (ref.Val, error) {
			fc.resolve(v)
			f := fast.done[v.name]
			return f.val, f.err
		})
	}
	for i, res := range p.rules {
		val, det, err := res.Program.ContextEval(ctx, tc.act)
		u := p.fast.rules[i]
		costs = append(costs, charged{fmt.Sprintf("rule %d", i), *det.ActualCost(), 1, func(b policyBounds) float64 { return b.rules[i] }})
		compare(fmt.Sprintf("rule %d", i), *det.ActualCost(), val, err, func() (ref.Val, error) { return u.eval(fc.act) })
	}
	for i, res := range p.messages {
		if res.Program == nil {
			continue
		}
		val, det, err := res.Program.ContextEval(ctx, tc.act)
		u := p.fast.messages[i]
		costs = append(costs, charged{fmt.Sprintf("message %d", i), *det.ActualCost(), 1, func(b policyBounds) float64 { return b.messages[i] }})
		compare(fmt.Sprintf("message %d", i), *det.ActualCost(), val, err, func() (ref.Val, error) { return u.eval(fc.act) })
	}
	check := func(how string, b policyBounds) {
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
		if allBounded && total > b.total {
			out.Problems = append(out.Problems, fmt.Sprintf("total cost %.0f over the policy's %s bound %.0f", total, how, b.total))
		}
	}
	if fc.act.offPath || rc.act.offPath {
		// A guarded receiver was not a string: the fast path would leave;
		// the bounds assume it was.
		return out
	}
	check("static", b)
	if !rulesOnly.failed {
		check("refined", p.costBounds(st, p.knownSizes(rulesOnly.done, false)))
		check("refined and walked", p.costBounds(st, p.knownSizes(rulesOnly.done, true)))
		out.Refined += 2
	}
	if !fast.failed {
		check("every-value", p.costBounds(st, p.knownSizes(fast.done, true)))
		out.Refined++
	}
	return out
}

func sameResult(a ref.Val, aerr error, b ref.Val, berr error) bool {
	if (aerr == nil) != (berr == nil) || (aerr != nil && aerr.Error() != berr.Error()) {
		return false
	}
	if aerr != nil {
		return true
	}
	if a == nil || b == nil {
		return a == b
	}
	return a.Type() == b.Type() && a.Equal(b) == types.True
}

// DirectCheck is what CheckDirect found on one input.
type DirectCheck struct {
	// Planned counts the expressions the direct evaluator has a plan
	// for, Compared those it gave a value for, GaveUp the others.
	Planned, Compared, GaveUp int
	// Sizes counts the variables' sizes compared, SameSizes those equal.
	Sizes, SameSizes int
	Problems         []string
}

// CheckDirect evaluates every variable, rule and message expression of p
// that the direct evaluator (direct.go) has a plan for, on in, both with
// it and with its untracked cel-go program, and requires, wherever the
// direct evaluator gives a value, that cel-go gives no error and the same
// value (type and equality).
func (p *Program) CheckDirect(in *Input) DirectCheck {
	var out DirectCheck
	if p.fast == nil {
		return out
	}
	r := in.values()
	if r.err != nil || (in.docs[0] == nil && in.Object != nil) || (in.docs[1] == nil && in.OldObject != nil) {
		return out
	}
	vars, plans := directPlans(p.variables, p.fast.rules, p.fast.messages)
	rules, messages := plans[0], plans[1]
	fast := &policyEval{ctx: context.Background(), p: p, r: r, done: map[string]*varResult{}, shared: map[string]*varResult{}, untracked: true}
	fc := fast.newContext()
	frame := &dframe{in: in, plans: vars, shared: map[string]dval{}}
	adapter := newValues() // the lazy values' adapter, as the review's makes them
	compare := func(what string, got dval, ok bool, want func() (ref.Val, error)) {
		out.Planned++
		if !ok {
			out.GaveUp++
			return
		}
		out.Compared++
		val, err := want()
		if errors.Is(err, errOffPath) {
			return
		}
		if g := got.refVal(adapter); !sameResult(g, nil, val, err) {
			out.Problems = append(out.Problems, fmt.Sprintf("%s: direct gives %v (%T), cel-go %v (%T), %v", what, g, g, val, val, err))
		}
	}
	for i, v := range p.variables {
		if vars[i] == nil {
			continue
		}
		got, ok := frame.variable(i)
		if ok {
			// Its sizes for the bound, as valueSizes reads them of its CEL
			// value.
			for _, walk := range []bool{false, true} {
				d, c := got.sizes(walk), valueSizes(got.refVal(adapter), walk)
				// Equal, or larger (an object with a repeated name), or its
				// nested sizes left to the static bound (more values than
				// the walk reads, repeated names counted).
				if d.set != c.set || d.nested && !c.nested || d.a.c < c.a.c || d.a.s < c.a.s || d.nested && (d.a.nc < c.a.nc || d.a.ns < c.a.ns) {
					out.Problems = append(out.Problems, fmt.Sprintf("variable %s: direct sizes %+v, of its CEL value %+v (walk %v)", v.name, d, c, walk))
				}
				if d == c {
					out.SameSizes++
				}
				out.Sizes++
			}
		}
		compare("variable "+v.name, got, ok, func() (ref.Val, error) {
			fc.resolve(v)
			f := fast.done[v.name]
			return f.val, f.err
		})
	}
	for what, plans := range map[string][]dexpr{"rule": rules, "message": messages} {
		us := p.fast.rules
		if what == "message" {
			us = p.fast.messages
		}
		for i, e := range plans {
			if e == nil {
				continue
			}
			got, ok := e(frame)
			compare(fmt.Sprintf("%s %d", what, i), got, ok, func() (ref.Val, error) { return us[i].eval(fc.act) })
		}
	}
	return out
}

// Log2Up is log2Up.
var Log2Up = log2Up

// Direct tells whether every rule of p has a plan for the direct
// evaluator, which the fast path then uses.
func (p *Program) Direct() bool { return p.fast != nil && p.fast.directRules != nil }

// DirectAdmits and DirectDenials are how many evaluations of p the
// direct evaluator admitted and denied.
func (p *Program) DirectAdmits() int64 {
	if p.fast == nil {
		return 0
	}
	return p.fast.direct.Load()
}

func (p *Program) DirectDenials() int64 {
	if p.fast == nil {
		return 0
	}
	return p.fast.denials.Load()
}

// refVal is v as cel-go's value: a document's value as the lazy values
// read it (member, through the review's adapter), a made list as cel-go's
// list of those.
func (v dval) refVal(adapter *values) ref.Val {
	var val ref.Val
	switch {
	case v.k == dNone:
		return types.OptionalNone
	case v.doc != nil:
		val = adapter.NativeToValue(member(v.doc, jsonscan.Span{Start: v.start, End: v.end}))
	case v.k == dObject:
		val = types.NewStringInterfaceMap(adapter, map[string]any{})
	case v.k == dList:
		elems := make([]ref.Val, len(v.list))
		for i, e := range v.list {
			elems[i] = e.refVal(adapter)
		}
		val = types.NewRefValList(adapter, elems)
	case v.k == dNull:
		val = types.NullValue
	case v.k == dBool:
		val = types.Bool(v.b)
	case v.k == dInt:
		val = types.Int(v.i)
	case v.k == dString:
		val = types.String(v.s)
	default:
		return types.NewErr("no value")
	}
	if v.opt {
		return types.OptionalOf(val)
	}
	return val
}
