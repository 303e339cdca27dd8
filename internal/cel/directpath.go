package cel

import "sync"

// frames are the direct evaluator's frames, reused: a frame is a few
// kilobytes.
var frames = sync.Pool{New: func() any { return new(dframe) }}

// admitsDirect is the fast path's evaluation of the rules with the direct
// evaluator (direct.go), for the verdict q: decided false when it cannot
// (a rule without a plan, an object given other than as JSON, or an
// evaluation it gives up on), then cel-go's untracked programs evaluate
// the rules; else whether every rule admits, the message expressions
// bounded again with the sizes of the values of the variables the rules
// read, when q asks for it.
func (p *Program) admitsDirect(in *Input, fi *fastInput, q verdict, r *review) (admits, decided bool) {
	fp := p.fast
	if fp.directRules == nil || (in.docs[0] == nil && in.Object != nil) || (in.docs[1] == nil && in.OldObject != nil) {
		return false, false
	}
	f := frames.Get().(*dframe)
	defer func() {
		f.docs, f.plans, f.shared = [2]*document{}, nil, nil
		frames.Put(f)
	}()
	f.docs, f.plans, f.shared, f.base = in.docs, fp.directVars, fi.direct, 0
	for i := range f.plans {
		f.vars[i] = dvar{}
	}
	for _, rule := range fp.directRules {
		v, ok := rule(f)
		if !ok {
			return false, false
		}
		if v.k != dBool || v.opt || !v.b {
			return false, true
		}
	}
	if q == rulesBounded {
		done := map[string]*varResult{}
		for i := range f.plans {
			if f.vars[i].state == 1 {
				done[p.variables[i].name] = &varResult{val: f.vars[i].val.refVal(r.adapter)}
			}
		}
		if !fp.refinedOK(p, fi.st, done) {
			return false, true
		}
	}
	return true, true
}
