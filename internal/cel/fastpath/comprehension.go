package fastpath

import celast "github.com/google/cel-go/common/ast"

// comprehension evaluates a comprehension over a list as cel-go's folder
// does: for each element, the loop condition (a false one stops), then
// the step into the accumulator; then the result.
func (c *dcompiler) comprehension(x celast.ComprehensionExpr) (dexpr, bool) {
	if x.HasIterVar2() || len(c.scope)+2 > maxSlots {
		return nil, false
	}
	rng, ok := c.compile(x.IterRange())
	if !ok {
		return nil, false
	}
	init, ok := c.compile(x.AccuInit())
	if !ok {
		return nil, false
	}
	accu := len(c.scope)
	c.scope = append(c.scope, x.AccuVar())
	defer func() { c.scope = c.scope[:accu] }()
	result, ok := c.compile(x.Result())
	if !ok {
		return nil, false
	}
	iter := len(c.scope)
	c.scope = append(c.scope, x.IterVar())
	cond, ok := c.compile(x.LoopCondition())
	if !ok {
		return nil, false
	}
	step, ok := c.compile(x.LoopStep())
	if !ok {
		return nil, false
	}
	return func(f *dframe) (dval, bool) {
		r, ok := rng(f)
		if !ok || r.opt {
			return dval{}, false
		}
		// Over a map, cel-go iterates its keys in Go's random map order:
		// here they go in the JSON's order, and a result that the order
		// could change (a list of two keys or more, from filter or map)
		// gives up. The other macros' results (all, exists, exists_one: a
		// bool) are the same in any order when no element fails, and the
		// evaluation gives up where one does.
		overMap := r.k == dObject
		if overMap {
			keys, ok := r.keys()
			if !ok {
				return dval{}, false
			}
			r = dval{k: dList, list: keys}
		}
		if r.k != dList && r.k != dArray {
			return dval{}, false
		}
		a, ok := init(f)
		if !ok {
			return dval{}, false
		}
		f.slots[f.base+accu] = a
		failed := false
		r.each(func(e dval) bool {
			f.slots[f.base+iter] = e
			c, ok := cond(f)
			if !ok || c.k != dBool || c.opt {
				failed = true
				return false
			}
			if !c.b {
				return false
			}
			s, ok := step(f)
			if !ok {
				failed = true
				return false
			}
			f.slots[f.base+accu] = s
			return true
		})
		if failed {
			return dval{}, false
		}
		v, ok := result(f)
		if ok && overMap && !(v.k == dBool || (v.k == dList && len(v.list) <= 1)) {
			return dval{}, false
		}
		return v, ok
	}, true
}
