package fastpath

import (
	"strings"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/tollgate-dev/tollgate/internal/cel/bound"
)

// The direct evaluator's calls and operators (direct.go compiles the
// rest): each gives cel-go's value for the kinds it models, or gives up.

func (c *dcompiler) call(call celast.CallExpr) (dexpr, bool) {
	args := call.Args()
	if call.IsMemberFunction() {
		args = append([]celast.Expr{call.Target()}, args...)
	}
	if call.FunctionName() == operators.OptSelect {
		return c.optSelect(args)
	}
	xs, ok := c.all(args)
	if !ok {
		return nil, false
	}
	fn := call.FunctionName()
	member := call.IsMemberFunction()
	switch {
	case len(xs) == 1 && fn == operators.LogicalNot:
		return unary(xs[0], func(v dval) (dval, bool) { return dBoolOf(!v.b), v.k == dBool && !v.opt })
	case len(xs) == 1 && fn == operators.NotStrictlyFalse:
		return unary(xs[0], func(v dval) (dval, bool) { return v, v.k == dBool && !v.opt })
	case len(xs) == 1 && fn == overloads.Size:
		return unary(xs[0], func(v dval) (dval, bool) {
			n, ok := v.size()
			return dval{k: dInt, i: n}, ok && !v.opt
		})
	case len(xs) == 2 && fn == operators.LogicalAnd:
		return logical(xs[0], xs[1], false), true
	case len(xs) == 2 && fn == operators.LogicalOr:
		return logical(xs[0], xs[1], true), true
	case len(xs) == 3 && fn == operators.Conditional:
		cond, then, els := xs[0], xs[1], xs[2]
		return func(f *dframe) (dval, bool) {
			v, ok := cond(f)
			if !ok || v.k != dBool || v.opt {
				return dval{}, false
			}
			if v.b {
				return then(f)
			}
			return els(f)
		}, true
	case len(xs) == 2 && (fn == operators.Equals || fn == operators.NotEquals):
		neg := fn == operators.NotEquals
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			eq, ok := a.equal(b)
			return dBoolOf(eq != neg), ok
		})
	case len(xs) == 2 && fn == operators.In:
		return binary(xs[0], xs[1], in)
	case len(xs) == 2 && (fn == operators.Less || fn == operators.LessEquals || fn == operators.Greater || fn == operators.GreaterEquals):
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			if a.k != dInt || b.k != dInt || a.opt || b.opt {
				return dval{}, false
			}
			switch fn {
			case operators.Less:
				return dBoolOf(a.i < b.i), true
			case operators.LessEquals:
				return dBoolOf(a.i <= b.i), true
			case operators.Greater:
				return dBoolOf(a.i > b.i), true
			}
			return dBoolOf(a.i >= b.i), true
		})
	case len(xs) == 2 && fn == operators.Add:
		return binary(xs[0], xs[1], add)
	case len(xs) == 2 && fn == operators.Index:
		return binary(xs[0], xs[1], index)
	case len(xs) == 2 && member && (fn == overloads.StartsWith || fn == overloads.EndsWith || fn == overloads.Contains):
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			if a.k != dString || b.k != dString || a.opt || b.opt {
				return dval{}, false
			}
			switch fn {
			case overloads.StartsWith:
				return dBoolOf(strings.HasPrefix(a.s, b.s)), true
			case overloads.EndsWith:
				return dBoolOf(strings.HasSuffix(a.s, b.s)), true
			}
			return dBoolOf(strings.Contains(a.s, b.s)), true
		})
	case len(xs) == 2 && member && (fn == "indexOf" || fn == "lastIndexOf"):
		last := fn == "lastIndexOf"
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			if a.k != dString || b.k != dString || a.opt || b.opt {
				return dval{}, false // a list's indexOf, among others
			}
			return dval{k: dInt, i: runeIndex(a.s, b.s, last)}, true
		})
	case len(xs) == 2 && member && fn == "substring":
		return binary(xs[0], xs[1], directSubstring)
	case (len(xs) == 1 || len(xs) == 2) && member && fn == "join":
		sep := func(*dframe) (dval, bool) { return dval{k: dString}, true }
		if len(xs) == 2 {
			sep = xs[1]
		}
		return binary(xs[0], sep, joined)
	case len(xs) == 2 && member && fn == "orValue":
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			switch {
			case a.k == dNone:
				return b, true
			case a.opt:
				a.opt = false
				return a, true
			}
			return dval{}, false
		})
	case len(xs) == 2 && !member && fn == bound.OrValueCompat:
		// Kyverno's x.orValue(y): strict in both (binary gives up on
		// either's error), then x's value, y for none, or x itself.
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			if a.k == dNone {
				return b, true
			}
			a.opt = false
			return a, true
		})
	case len(xs) == 1 && member && fn == "hasValue":
		return unary(xs[0], func(v dval) (dval, bool) { return dBoolOf(v.k != dNone), v.opt || v.k == dNone })
	}
	return nil, false
}

// optSelect is x.?name: optional.none() when the object x has no member
// name, else optional.of its value; on an optional x, none stays none and
// a value is selected from.
func (c *dcompiler) optSelect(args []celast.Expr) (dexpr, bool) {
	if len(args) != 2 || args[1].Kind() != celast.LiteralKind {
		return nil, false
	}
	name, ok := args[1].AsLiteral().(types.String)
	if !ok {
		return nil, false
	}
	operand, ok := c.compile(args[0])
	if !ok {
		return nil, false
	}
	return func(f *dframe) (dval, bool) {
		v, ok := operand(f)
		if !ok || v.k == dNone {
			return v, ok
		}
		if v.k != dObject {
			return dval{}, false
		}
		m, has := v.field(string(name))
		if !has {
			return dval{k: dNone}, true
		}
		m.opt = true
		return m, true
	}, true
}

func unary(x dexpr, op func(dval) (dval, bool)) (dexpr, bool) {
	return func(f *dframe) (dval, bool) {
		v, ok := x(f)
		if !ok {
			return dval{}, false
		}
		return op(v)
	}, true
}

func binary(x, y dexpr, op func(a, b dval) (dval, bool)) (dexpr, bool) {
	return func(f *dframe) (dval, bool) {
		a, ok := x(f)
		if !ok {
			return dval{}, false
		}
		b, ok := y(f)
		if !ok {
			return dval{}, false
		}
		return op(a, b)
	}, true
}

// logical is && (or ||, when or): the left side decides alone when it is
// false (true); otherwise the right side, which must be a bool.
func logical(x, y dexpr, or bool) dexpr {
	return func(f *dframe) (dval, bool) {
		a, ok := x(f)
		if !ok || a.k != dBool || a.opt {
			return dval{}, false
		}
		if a.b == or {
			return a, true
		}
		b, ok := y(f)
		if !ok || b.k != dBool || b.opt {
			return dval{}, false
		}
		return b, true
	}
}

// in is a in b: a key of the object b, or an element of the list b equal
// to a (every element of a's kind).
func in(a, b dval) (dval, bool) {
	if a.opt || b.opt {
		return dval{}, false
	}
	if b.k == dObject {
		if a.k != dString {
			return dval{}, false
		}
		return dBoolOf(b.hasField(a.s)), true
	}
	found, ok := false, true
	if !b.each(func(e dval) bool {
		eq, same := a.equal(e)
		if !same {
			ok = false
			return false
		}
		found = found || eq
		return true
	}) {
		return dval{}, false
	}
	return dBoolOf(found), ok
}

// add is a + b for ints (no overflow), strings and lists.
func add(a, b dval) (dval, bool) {
	if a.opt || b.opt {
		return dval{}, false
	}
	switch {
	case a.k == dInt && b.k == dInt:
		s := a.i + b.i
		if (s > a.i) != (b.i > 0) {
			return dval{}, false // overflow: cel-go's error
		}
		return dval{k: dInt, i: s}, true
	case a.k == dString && b.k == dString:
		return dval{k: dString, s: a.s + b.s}, true
	}
	x, ok := a.elements()
	if !ok {
		return dval{}, false
	}
	y, ok := b.elements()
	if !ok {
		return dval{}, false
	}
	out := make([]dval, 0, len(x)+len(y))
	return dval{k: dList, list: append(append(out, x...), y...)}, true
}

// index is a[b]: the element of the list a at the int b, or the member
// of the object a named by the string b.
func index(a, b dval) (dval, bool) {
	if a.opt || b.opt {
		return dval{}, false
	}
	switch {
	case a.k == dObject && b.k == dString:
		return a.field(b.s)
	case b.k == dInt && (a.k == dList || a.k == dArray):
		var out dval
		i, found := int64(0), false
		a.each(func(e dval) bool {
			if i == b.i {
				out, found = e, true
				return false
			}
			i++
			return true
		})
		return out, found
	}
	return dval{}, false
}

// joined is the strings extension's list.join(sep): the elements, which
// must all be strings, joined by sep.
func joined(list, sep dval) (dval, bool) {
	if sep.k != dString || sep.opt || list.opt {
		return dval{}, false
	}
	var b strings.Builder
	n, ok := 0, true
	if !list.each(func(e dval) bool {
		if e.k != dString || e.opt {
			ok = false
			return false
		}
		if n > 0 {
			b.WriteString(sep.s)
		}
		b.WriteString(e.s)
		n++
		return true
	}) || !ok {
		return dval{}, false // join: invalid input
	}
	return dval{k: dString, s: b.String()}, true
}

// directSubstring is a.substring(b) of cel-go's strings extension: from
// the code point b on; false for an index out of range.
func directSubstring(a, b dval) (dval, bool) {
	if a.k != dString || b.k != dInt || a.opt || b.opt {
		return dval{}, false
	}
	runes := []rune(a.s)
	if b.i < 0 || b.i > int64(len(runes)) {
		return dval{}, false // index out of range
	}
	return dval{k: dString, s: string(runes[b.i:])}, true
}

// runeIndex is cel-go's strings extension's indexOf(str, substr) (or
// lastIndexOf): the index in code points of the first (last) occurrence,
// -1 for none, the strings compared as runes (invalid UTF-8 read as
// U+FFFD), as it compares them.
func runeIndex(str, substr string, last bool) int64 {
	runes := []rune(str)
	if substr == "" {
		if last {
			return int64(len(runes))
		}
		return 0
	}
	if last && len(str) < len(substr) {
		return -1
	}
	sub := []rune(substr)
	match := func(i int) bool {
		for j := range sub {
			if runes[i+j] != sub[j] {
				return false
			}
		}
		return true
	}
	if last {
		for i := min(len(runes)-1, len(runes)-len(sub)); i >= 0; i-- {
			if match(i) {
				return int64(i)
			}
		}
		return -1
	}
	if len(runes) == 0 {
		return -1
	}
	for i := 0; i < len(runes)-(len(sub)-1); i++ {
		if match(i) {
			return int64(i)
		}
	}
	return -1
}
