package cel

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// valueWalkLimit is how many values nested in a variable's value
// valueSizes reads before it keeps the bound's nested sizes instead: a
// refinement must cost little next to an evaluation.
const valueWalkLimit = 64

// valueSizes are the sizes (aval) of a concrete value, for the bound
// (bound.go) of what reads it: its own exactly, as cel-go's actualSize
// counts them (a list's or map's entries, a string's code points, an
// optional's value's), and those of the values nested in it by reading at
// most valueWalkLimit of them, else static's (a bound of the expression
// that gave the value, which holds for it too), if bounded (else false).
func valueSizes(v ref.Val, static aval, bounded bool) (aval, bool) {
	out := own(v)
	budget := valueWalkLimit
	if nc, ns, ok := nestedSizes(v, &budget); ok {
		out.nc, out.ns = nc, ns
	} else if bounded {
		out.nc, out.ns = static.nc, static.ns
	} else {
		return aval{}, false
	}
	return out, true
}

// own is a value's own sizes.
func own(v ref.Val) aval {
	switch x := v.(type) {
	case types.String:
		return aval{s: float64(x.Size().(types.Int))}
	case types.Bytes:
		return aval{s: float64(len(x))}
	case *types.Optional:
		if x.HasValue() {
			return own(x.GetValue())
		}
		return scalar
	case traits.Sizer:
		if n, ok := x.Size().(types.Int); ok {
			return aval{c: float64(n)}
		}
	}
	return scalar
}

// nestedSizes are the largest own sizes of the values nested in v (its
// elements, keys and values, at any depth), false when reading them would
// take more than *budget values.
func nestedSizes(v ref.Val, budget *int) (nc, ns float64, ok bool) {
	if o, isOpt := v.(*types.Optional); isOpt {
		if !o.HasValue() {
			return 0, 0, true
		}
		v = o.GetValue()
	}
	visit := func(x ref.Val) bool {
		*budget--
		if *budget < 0 {
			return false
		}
		s := own(x)
		xc, xs, ok := nestedSizes(x, budget)
		nc, ns = max(nc, s.c, xc), max(ns, s.s, xs)
		return ok
	}
	switch x := v.(type) {
	case types.String, types.Bytes:
		return 0, 0, true
	case traits.Lister:
		for it := x.Iterator(); it.HasNext() == types.True; {
			if !visit(it.Next()) {
				return 0, 0, false
			}
		}
		return nc, ns, true
	case traits.Mapper:
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			if !visit(k) {
				return 0, 0, false
			}
			val, found := x.Find(k)
			if !found || !visit(val) {
				return 0, 0, false
			}
		}
		return nc, ns, true
	case traits.Sizer, traits.Iterable:
		return 0, 0, false // a container of another kind: not read
	}
	return 0, 0, true
}
