package fastpath

import (
	"errors"
	"fmt"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"github.com/tollgate-dev/tollgate/internal/cel/bound"
	"github.com/tollgate-dev/tollgate/internal/cel/lazy"
	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// What the differential tests of package cel (TestDirectAsCEL), where
// both evaluators are visible, check of the direct evaluator: not used
// on a review's path.

// DirectCheck is what CheckDirect found on one review.
type DirectCheck struct {
	// Planned counts the expressions the direct evaluator has a plan
	// for, Compared those it gave a value for, GaveUp the others.
	Planned, Compared, GaveUp int
	// Sizes counts the variables' sizes compared, SameSizes those equal.
	Sizes, SameSizes int
	Problems         []string
}

// CheckDirect evaluates every variable, rule and message expression of p
// that the direct evaluator has a plan for, on r, both with it and with
// its untracked cel-go program (in act, the tracked path's activation
// with untracked variables; variable(i) the value cel-go gives variable
// i there), and requires, wherever the direct evaluator gives a value,
// that cel-go gives no error and the same value (type and equality),
// values made through adapter as the review's lazy values are.
func (p *Policy) CheckDirect(r *Review, adapter *lazy.Values, act interpreter.Activation, variable func(i int) (ref.Val, error)) DirectCheck {
	var out DirectCheck
	r.direct, r.paths = map[string]dval{}, [2][]dpath{}
	vars, plans := directPlans(p.vars, p.rules, p.messages)
	rules, messages := plans[0], plans[1]
	frame := &dframe{r: r, plans: vars, shared: r.direct}
	compare := func(what string, got dval, ok bool, want func() (ref.Val, error)) {
		out.Planned++
		if !ok {
			out.GaveUp++
			return
		}
		out.Compared++
		val, err := want()
		if errors.Is(err, ErrOffPath) {
			return
		}
		if g := got.refVal(adapter); !SameResult(g, nil, val, err) {
			out.Problems = append(out.Problems, fmt.Sprintf("%s: direct gives %v (%T), cel-go %v (%T), %v", what, g, g, val, val, err))
		}
	}
	for i, v := range p.vars {
		if vars[i] == nil {
			continue
		}
		got, ok := frame.variable(i)
		if ok {
			// Its sizes for the bound, as bound.ValueSizes reads them of
			// its CEL value.
			for _, walk := range []bool{false, true} {
				d, c := got.sizes(walk), bound.ValueSizes(got.refVal(adapter), walk)
				// Equal, or larger (an object with a repeated name), or its
				// nested sizes left to the static bound (more values than
				// the walk reads, repeated names counted).
				if !d.Covers(c) {
					out.Problems = append(out.Problems, fmt.Sprintf("variable %s: direct sizes %+v, of its CEL value %+v (walk %v)", v.Name, d, c, walk))
				}
				if d == c {
					out.SameSizes++
				}
				out.Sizes++
			}
		}
		compare("variable "+v.Name, got, ok, func() (ref.Val, error) { return variable(i) })
	}
	for what, plans := range map[string][]dexpr{"rule": rules, "message": messages} {
		us := p.rules
		if what == "message" {
			us = p.messages
		}
		for i, e := range plans {
			if e == nil {
				continue
			}
			got, ok := e(frame)
			compare(fmt.Sprintf("%s %d", what, i), got, ok, func() (ref.Val, error) { return us[i].Eval(act) })
		}
	}
	return out
}

// SameResult tells whether two evaluations gave the same value (type and
// equality) or the same error.
func SameResult(a ref.Val, aerr error, b ref.Val, berr error) bool {
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

// refVal is v as cel-go's value: a document's value as the lazy values
// read it (lazy.Native, through the review's adapter), a made list as
// cel-go's list of those.
func (v dval) refVal(adapter *lazy.Values) ref.Val {
	var val ref.Val
	switch {
	case v.k == dNone:
		return types.OptionalNone
	case v.doc != nil:
		val = adapter.NativeToValue(lazy.Native(v.doc, jsonscan.Span{Start: v.start, End: v.end}))
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
