package bound

import (
	"strings"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
)

// scalarResult are the whitelisted functions whose result is a bool, an
// int or a null: own size 1, whatever their operands.
var scalarResult = map[string]bool{
	"_&&_": true, "_||_": true, "!_": true, "@not_strictly_false": true,
	"_==_": true, "_!=_": true, "_<_": true, "_<=_": true, "_>_": true, "_>=_": true, "@in": true,
	"size": true, "_-_": true, "_*_": true, "_/_": true, "_%_": true, "-_": true,
	"hasValue": true, "optional.none": true, "startsWith": true, "endsWith": true, "contains": true,
	"matches": true, "indexOf": true, "lastIndexOf": true,
}

// OrValueCompat is what Kyverno's environment rewrites x.orValue(y) to
// (package kyverno declares it): a function of its own, with one
// overload, OrValueCompat+"_dyn_dyn", strict in both arguments: x's
// value when x is an optional with one, y when it has none, x itself
// when x is not an optional.
const OrValueCompat = "__orValueCompat__"

// call bounds a function call: its operands', then its own charge.
func (z *analyzer) call(e celast.Expr) (aval, float64) {
	call := e.AsCall()
	fn := call.FunctionName()
	var operands []celast.Expr
	if call.IsMemberFunction() {
		operands = append(operands, call.Target())
	}
	operands = append(operands, call.Args()...)
	if fn == "_?_:_" && len(operands) == 3 {
		_, cc := z.expr(operands[0])
		t, ct := z.expr(operands[1])
		f, cf := z.expr(operands[2])
		return join(t, f), cc + max(ct, cf)
	}
	args := make([]aval, len(operands))
	var cost float64
	for i, o := range operands {
		v, c := z.expr(o)
		args[i], cost = v, cost+c
	}
	if !z.ok {
		return z.fail()
	}
	arg := func(i int) aval {
		if i < len(args) {
			return args[i]
		}
		z.ok = false
		return aval{}
	}
	overloads := z.a.GetOverloadIDs(e.ID())
	switch fn {
	case "_&&_", "_||_":
		return scalar, cost
	case "!_", "@not_strictly_false", "size", "_-_", "_*_", "_/_", "_%_", "-_", "hasValue", "optional.none":
		return scalar, cost + 1
	case "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_":
		return scalar, cost + min(arg(0).size(), arg(1).size())/10 + 1
	case "@in":
		return scalar, cost + arg(1).size() + 1
	case "_+_":
		a, b := arg(0), arg(1)
		return aval{a.c + b.c, a.s + b.s, max(a.nc, b.nc), max(a.ns, b.ns)}, cost + (a.size()+b.size())/10 + 1
	case "_[_]", "_[?_]", "_?._":
		if len(operands) == 2 && operands[1].Kind() == celast.LiteralKind {
			if name, ok := operands[1].AsLiteral().(types.String); ok {
				if f, ok := z.field(operands[0], string(name)); ok {
					return f, cost + selectCost
				}
			}
		}
		return arg(0).elem(), cost + selectCost
	case "orValue", "or":
		return join(arg(0), arg(1)), cost + 1
	case OrValueCompat:
		// A function with no cost estimator of its own costs 1 a call.
		if !only(overloads, OrValueCompat+"_dyn_dyn") {
			return z.fail()
		}
		return join(arg(0), arg(1)), cost + 1
	case "value", "dyn":
		return arg(0), cost + 1
	case "optional.of", "optional.ofNonZeroValue":
		return arg(0), cost + 1
	case "startsWith", "endsWith":
		return scalar, cost + arg(1).size()/10 + 1
	case "contains":
		if !only(overloads, "contains_string") {
			return z.fail()
		}
		return scalar, cost + (arg(0).size()/10+1)*(arg(1).size()/10+1)
	case "matches":
		if !only(overloads, "matches", "matches_string") {
			return z.fail()
		}
		return scalar, cost + ((arg(0).size()+1)/10+1)*(arg(1).size()/4+1)
	case "lowerAscii", "upperAscii", "trim", "substring":
		if !prefixed(overloads, "string_") {
			return z.fail()
		}
		return aval{s: arg(0).s}, cost + arg(0).size()/10 + 1
	case "indexOf", "lastIndexOf":
		switch {
		case prefixed(overloads, "string_"):
		case z.guarded && Guardable(overloads):
			z.guard = true
		default:
			return z.fail()
		}
		// CallCost traverses the string's bytes: at most 4 a code point.
		return scalar, cost + 4*arg(0).size()/10 + 1
	case "join":
		if !only(overloads, "list_join", "list_join_string") {
			return z.fail()
		}
		l := arg(0)
		n := l.c * l.ns
		if len(args) > 1 {
			n += l.c * arg(1).size()
		}
		return aval{s: n}, cost + 2*max(n, 1)/10 + 1
	case "flatten":
		if !only(overloads, "list_flatten") {
			return z.fail()
		}
		l := arg(0)
		// trackListFlatten: the input's size, the call, a new list.
		return aval{c: l.c * max(l.nc, 1), nc: l.nc, ns: l.ns}, cost + l.size() + 1 + listCreateCost + 1
	}
	return z.fail()
}

// only tells whether the call resolved to some of these overloads only.
func only(got []string, want ...string) bool {
	if len(got) == 0 {
		return false
	}
	for _, g := range got {
		found := false
		for _, w := range want {
			found = found || g == w
		}
		if !found {
			return false
		}
	}
	return true
}

func prefixed(got []string, prefix string) bool {
	if len(got) == 0 {
		return false
	}
	for _, g := range got {
		if !strings.HasPrefix(g, prefix) {
			return false
		}
	}
	return true
}

// Guardable tells whether a call's overloads are string overloads and
// the list library's indexOf or lastIndexOf, with at least one of each:
// a call the fast path evaluates with its receiver guarded (a string, or
// the evaluation leaves the fast path), which the bound then charges as
// on a string.
func Guardable(overloads []string) bool {
	var str, list bool
	for _, o := range overloads {
		switch {
		case strings.HasPrefix(o, "string_"):
			str = true
		case o == "list_a_index_of_int" || o == "list_a_last_index_of_int":
			list = true
		default:
			return false
		}
	}
	return str && list
}
