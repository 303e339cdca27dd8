package bound

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// ValueWalkLimit is how many values nested in a variable's value
// valueSizes reads before it keeps the bound's nested sizes instead: a
// refinement must cost little next to an evaluation.
const ValueWalkLimit = 64

// Known are the sizes (aval) of a variable's value, for the bound
// (bound.go) of what reads it: its own exactly, as cel-go's actualSize
// counts them (a list's or map's entries, a string's code points, an
// optional's value's), and, if nested, those of the values nested in it,
// read up to ValueWalkLimit of them (else the bound's stand).
type Known struct {
	a           aval
	nested, set bool
}

// ValueSizes are v's known sizes, its nested ones only if walk.
func ValueSizes(v ref.Val, walk bool) Known {
	k := Known{a: own(v), set: true}
	if walk {
		budget := ValueWalkLimit
		k.a.nc, k.a.ns, k.nested = nestedSizes(v, &budget)
	}
	return k
}

// over is what k gives of a variable whose value the analysis bounds by
// static (if bounded).
func (k Known) over(static aval, bounded bool) (aval, bool) {
	switch {
	case k.nested:
		return k.a, true
	case bounded:
		return aval{k.a.c, k.a.s, static.nc, static.ns}, true
	}
	return aval{}, false
}

// roundedKnown rounds every size of ks up to 0 or a power of two (a
// bound for larger sizes holds for smaller ones), appending to key a byte
// for each (0 for 0, k+1 for 2^k); false if one is over 2^40.
func roundedKnown(ks []Known, key []byte) ([]byte, bool) {
	for i := range ks {
		k := &ks[i]
		if !k.set {
			key = append(key, 0xff)
			continue
		}
		flag := byte(0)
		if k.nested {
			flag = 1
		}
		key = append(key, flag)
		for _, x := range []*float64{&k.a.c, &k.a.s, &k.a.nc, &k.a.ns} {
			if *x <= 0 {
				*x = 0
				key = append(key, 0)
				continue
			}
			e := Log2Up(*x)
			if e > 40 {
				return key, false
			}
			*x = float64(uint64(1) << e)
			key = append(key, byte(e+1))
		}
	}
	return key, true
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

// KnownOf are the known sizes of a value of c entries (a list or map) or
// s code points (a string), its nested ones if nested (nc, ns, as
// ValueSizes reads them walking): what the direct evaluator reads of the
// values it makes, without making their CEL values.
func KnownOf(c, s float64, nested bool, nc, ns float64) Known {
	k := Known{a: aval{c: c, s: s}, set: true}
	if nested {
		k.a.nc, k.a.ns, k.nested = nc, ns, true
	}
	return k
}

// Covers tells whether k bounds c, the sizes of the same value read
// otherwise: set alike, its own sizes at least c's, and its nested ones
// too where k has them.
func (k Known) Covers(c Known) bool {
	return k.set == c.set && !(k.nested && !c.nested) && k.a.c >= c.a.c && k.a.s >= c.a.s &&
		!(k.nested && (k.a.nc < c.a.nc || k.a.ns < c.a.ns))
}
