package bound

import (
	"math"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
)

// The bound: an upper bound, computed from the checked AST alone, of the
// runtime cost the apiserver's tracked programs report for an expression
// (EvalDetails.ActualCost), as a function of the review's sizes (stats).
//
// Soundness. cel-go's cost tracker (interpreter/runtimecost.go, Observe)
// charges, per evaluated plan step: 1 per attribute (identifier) and per
// qualifier (field selection, index, optional selection; presence tests
// cost nothing with PresenceTestHasCost(false)); nothing for constants,
// &&, ||, ?: and the comprehension itself; 10 per list and 30 per map
// literal; and for each function call costCall: the overload trackers of
// the libraries, else the Kubernetes CostEstimator.CallCost
// (k8s.io/apiserver/pkg/cel/library/cost.go), else its default table, all
// functions of the actual sizes of the arguments (actualSize: a list's or
// map's entries, a string's code points, 1 for anything else, optionals
// unwrapped) or of the result. The analysis charges every node what its
// plan steps can cost at most, generously (2 per selection, ceil(x) as
// x+1, strings' bytes as 4 per code point), for a whitelist of node kinds
// and functions whose charge it knows; anything else has no bound, and
// the policy then always takes the tracked path. A call that may dispatch
// to overloads of different charges is charged the most of them, except
// indexOf and lastIndexOf on a receiver of unknown type, charged as on a
// string where the fast path evaluates the receiver guarded (guard.go). Each value carries upper
// bounds of its own size (as a list or map, as a string) and of the size
// of any value nested in it, so the size of an argument is bounded
// wherever a charge depends on it. A comprehension runs at most as many
// iterations as its range has entries; its accumulator's size is bounded
// by init + iterations × growth when each step's size is at most the
// accumulator's plus a constant (checked syntactically: affine), and its
// nested sizes by a fixpoint. Every operation used (max, +, ×) is monotone
// in the sizes, so a bound for larger sizes holds for smaller ones.
//
// The input's sizes (stats) are the largest list length, map size and
// string length in the review's object, oldObject, request and
// namespaceObject, which bounds every value read from them; strings
// apart in the objects' metadata (where annotations such as kubectl's
// last-applied-configuration are long) and elsewhere, so that what is read
// from object.spec is bounded by the strings of the rest alone.

// Stats are a review's sizes: L bounds every list's length and map's
// size; TM every string's length in code points (map keys' too) in
// object.metadata and oldObject.metadata, TR everywhere else.
type Stats struct{ L, TM, TR float64 }

// aval bounds a value's sizes: c its own as a list or map (entries), s its
// own as a string (code points); nc and ns the same of any value nested
// in it, at any depth (elements, keys, values).
type aval struct{ c, s, nc, ns float64 }

// size bounds actualSize.
func (v aval) size() float64 { return max(v.c, v.s, 1) }

// elem bounds an element, key, value or field of v.
func (v aval) elem() aval { return aval{v.nc, v.ns, v.nc, v.ns} }

// nested bounds a list or map holding v.
func (v aval) nested() (nc, ns float64) { return max(v.c, v.nc), max(v.s, v.ns) }

func join(a, b aval) aval {
	return aval{max(a.c, b.c), max(a.s, b.s), max(a.nc, b.nc), max(a.ns, b.ns)}
}

var scalar = aval{}

const (
	selectCost     = 2 // an attribute or qualifier step, generously
	listCreateCost = 10
	mapCreateCost  = 30
)

// analyzer bounds the expressions of one policy for one stats.
type analyzer struct {
	a *celast.AST
	// object bounds object and oldObject; meta their metadata, rest their
	// other fields, request and namespaceObject.
	object, meta, rest aval
	vars               map[string]aval
	scope              []binding
	ok                 bool
	// guarded: the expression is evaluated with its receivers guarded
	// (guard.go), so a guardable call is charged as on a string; guard:
	// the bound did so.
	guarded, guard bool
}

func newAnalyzer(st Stats) *analyzer {
	return &analyzer{
		object: aval{st.L, 0, st.L, max(st.TM, st.TR)},
		meta:   aval{st.L, st.TM, st.L, st.TM},
		rest:   aval{st.L, st.TR, st.L, st.TR},
		vars:   map[string]aval{},
	}
}

// field bounds a field of operand, if operand is object or oldObject.
func (z *analyzer) field(operand celast.Expr, name string) (aval, bool) {
	if operand.Kind() != celast.IdentKind {
		return aval{}, false
	}
	switch id := operand.AsIdent(); id {
	case plugincel.ObjectVarName, plugincel.OldObjectVarName:
		if _, shadowed := z.lookup(id); shadowed {
			return aval{}, false
		}
		if name == "metadata" {
			return z.meta, true
		}
		return z.rest, true
	}
	return aval{}, false
}

type binding struct {
	name string
	v    aval
}

// bound is expression e's value and cost bounds, ok false when it has none.
func (z *analyzer) bound(a *celast.AST) (aval, float64, bool) {
	z.a, z.ok, z.scope, z.guard = a, true, z.scope[:0], false
	v, c := z.expr(a.Expr())
	if !z.ok || math.IsNaN(c) || math.IsInf(c, 0) {
		return aval{}, 0, false
	}
	return v, c, true
}

func (z *analyzer) fail() (aval, float64) {
	z.ok = false
	return aval{}, 0
}

func (z *analyzer) lookup(name string) (aval, bool) {
	for i := len(z.scope) - 1; i >= 0; i-- {
		if z.scope[i].name == name {
			return z.scope[i].v, true
		}
	}
	return aval{}, false
}

func (z *analyzer) expr(e celast.Expr) (aval, float64) {
	if !z.ok {
		return aval{}, 0
	}
	switch e.Kind() {
	case celast.LiteralKind:
		switch l := e.AsLiteral().(type) {
		case types.String:
			return aval{s: float64(len(l))}, 0
		case types.Bytes:
			return aval{s: float64(len(l))}, 0
		}
		return scalar, 0
	case celast.IdentKind:
		name := e.AsIdent()
		if v, ok := z.lookup(name); ok {
			return v, 1
		}
		switch name {
		case plugincel.ObjectVarName, plugincel.OldObjectVarName:
			return z.object, 1
		case plugincel.RequestVarName, plugincel.NamespaceVarName:
			return z.rest, 1
		case plugincel.ParamsVarName:
			return scalar, 1
		}
		return z.fail()
	case celast.SelectKind:
		s := e.AsSelect()
		if op := s.Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == plugincel.VariableVarName {
			if _, shadowed := z.lookup(plugincel.VariableVarName); !shadowed {
				if s.IsTestOnly() {
					return scalar, selectCost + 1
				}
				v, ok := z.vars[s.FieldName()]
				if !ok {
					return z.fail()
				}
				return v, selectCost + 1
			}
		}
		v, c := z.expr(s.Operand())
		if s.IsTestOnly() {
			return scalar, c + selectCost
		}
		if f, ok := z.field(s.Operand(), s.FieldName()); ok {
			return f, c + selectCost
		}
		return v.elem(), c + selectCost
	case celast.ListKind:
		els := e.AsList().Elements()
		return z.literal(els, len(els), listCreateCost)
	case celast.MapKind:
		entries := e.AsMap().Entries()
		parts := make([]celast.Expr, 0, 2*len(entries))
		for _, en := range entries {
			m := en.AsMapEntry()
			parts = append(parts, m.Key(), m.Value())
		}
		return z.literal(parts, len(entries), mapCreateCost)
	case celast.ComprehensionKind:
		return z.comprehension(e.AsComprehension())
	case celast.CallKind:
		return z.call(e)
	}
	return z.fail()
}

// literal bounds a list or map literal of n entries made of parts (the
// elements, or the keys and values): n entries, nesting the largest of
// its parts, costing them and create.
func (z *analyzer) literal(parts []celast.Expr, n int, create int) (aval, float64) {
	out := aval{c: float64(n)}
	cost := float64(create)
	for _, x := range parts {
		v, c := z.expr(x)
		nc, ns := v.nested()
		out.nc, out.ns = max(out.nc, nc), max(out.ns, ns)
		cost += c
	}
	return out, cost
}

// comprehension bounds a fold: at most size(range) iterations of the
// condition and the step (one more, generously), the accumulator bounded
// as the package comment says.
func (z *analyzer) comprehension(c celast.ComprehensionExpr) (aval, float64) {
	r, cost := z.expr(c.IterRange())
	init, ci := z.expr(c.AccuInit())
	cost += ci
	if !z.ok || !affine(c.LoopStep(), c.AccuVar()) {
		return z.fail()
	}
	n := r.c
	el := r.elem()
	depth := len(z.scope)
	z.scope = append(z.scope, binding{c.IterVar(), el})
	if c.HasIterVar2() {
		z.scope = append(z.scope, binding{c.IterVar2(), el})
	}
	defer func() { z.scope = z.scope[:depth] }()
	accu := init
	withAccu := func(v aval) {
		z.scope = append(z.scope[:depth+1+b2i(c.HasIterVar2())], binding{c.AccuVar(), v})
	}
	for round := 0; ; round++ {
		if round == 8 {
			return z.fail()
		}
		withAccu(aval{nc: accu.nc, ns: accu.ns})
		growth, _ := z.expr(c.LoopStep())
		final := aval{c: init.c + n*growth.c, s: init.s + n*growth.s, nc: accu.nc, ns: accu.ns}
		withAccu(final)
		step, _ := z.expr(c.LoopStep())
		if !z.ok {
			return z.fail()
		}
		next := join(final, aval{nc: step.nc, ns: step.ns})
		if next == final {
			accu = final
			break
		}
		accu = next
	}
	withAccu(accu)
	_, cc := z.expr(c.LoopCondition())
	_, cs := z.expr(c.LoopStep())
	res, cr := z.expr(c.Result())
	return res, cost + (n+1)*(cc+cs) + cr
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// affine tells whether e's own size is at most accu's plus e's own size
// with an empty accu: accu appears only as e itself, as one operand of +
// whose other does not read it, as a branch of ?:, or under a node whose
// own size does not depend on its operands' own sizes.
func affine(e celast.Expr, accu string) bool {
	if !reads(e, accu) {
		return true
	}
	switch e.Kind() {
	case celast.IdentKind:
		return true // accu itself
	case celast.SelectKind:
		return true // a field: bounded by accu's nested sizes
	case celast.CallKind:
		call := e.AsCall()
		args := call.Args()
		switch call.FunctionName() {
		case "_+_":
			a, b := args[0], args[1]
			return (affine(a, accu) && !reads(b, accu)) || (affine(b, accu) && !reads(a, accu))
		case "_?_:_":
			return affine(args[1], accu) && affine(args[2], accu)
		case "_[_]", "_[?_]", "_?._":
			return true
		}
		if scalarResult[call.FunctionName()] {
			return true
		}
	}
	return false
}

// reads tells whether e reads the variable name (not shadowed).
func reads(e celast.Expr, name string) bool {
	switch e.Kind() {
	case celast.IdentKind:
		return e.AsIdent() == name
	case celast.SelectKind:
		return reads(e.AsSelect().Operand(), name)
	case celast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() && reads(c.Target(), name) {
			return true
		}
		for _, a := range c.Args() {
			if reads(a, name) {
				return true
			}
		}
	case celast.ListKind:
		for _, el := range e.AsList().Elements() {
			if reads(el, name) {
				return true
			}
		}
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			m := en.AsMapEntry()
			if reads(m.Key(), name) || reads(m.Value(), name) {
				return true
			}
		}
	case celast.StructKind:
		return true // not analyzed anyway
	case celast.ComprehensionKind:
		c := e.AsComprehension()
		if reads(c.IterRange(), name) || reads(c.AccuInit(), name) {
			return true
		}
		if c.AccuVar() == name || c.IterVar() == name || (c.HasIterVar2() && c.IterVar2() == name) {
			return false
		}
		return reads(c.LoopCondition(), name) || reads(c.LoopStep(), name) || reads(c.Result(), name)
	}
	return false
}
