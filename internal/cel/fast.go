package cel

import (
	"context"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// The fast path: a policy's rules and the variables they read evaluated
// with untracked programs (untracked.go), when a bound (bound.go) proves
// that for this review's sizes no expression can reach the per-call limit
// and the policy cannot reach the budget, by a margin of 10. Its only
// outcome is "every rule admits": then the apiserver's validator admits
// too, since cost changes a decision only at a limit, and the untracked
// programs give the tracked programs' values. The message expressions,
// which the validator evaluates even when every rule admits and whose cost
// counts against the remaining budget, are bounded too (not evaluated: a
// message only words a denial). In every other case (a rule false or
// failing, a variable failing, no bound, sizes too large) the policy is
// evaluated again on the tracked path from scratch (evaluation is pure),
// so denials, messages, errors and budget errors are the validator's.

// margin is how far below each limit the bound must be.
const margin = 10

// fastPath is what a program needs for the fast path.
type fastPath struct {
	// rules and messages are the rules' and message expressions' untracked
	// programs (nil where a rule has no message expression); the
	// variables' are on the variables.
	rules, messages []*untracked
	// qualified memoizes qualifies by the stats' sizes rounded up to
	// powers of two (key), each a bool.
	qualified sync.Map
	// admits counts the evaluations the fast path decided.
	admits atomic.Int64
}

// qualifies tells whether the policy's bound holds for st, computed for
// st's sizes rounded up to powers of two (a bound for larger sizes holds
// for smaller ones) and memoized.
func (f *fastPath) qualifies(p *Program, st stats) bool {
	kl, km, kr := log2Up(st.l), log2Up(st.tm), log2Up(st.tr)
	if max(kl, km, kr) > 40 {
		return false
	}
	key := kl<<12 | km<<6 | kr
	rounded := stats{float64(uint64(1) << kl), float64(uint64(1) << km), float64(uint64(1) << kr)}
	if q, ok := f.qualified.Load(key); ok {
		return q.(bool)
	}
	q := p.costBounds(rounded).ok
	f.qualified.Store(key, q)
	return q
}

// log2Up is the least k with 2^k >= x, at most 41.
func log2Up(x float64) uint32 {
	k := uint32(0)
	for k <= 40 && float64(uint64(1)<<k) < x {
		k++
	}
	return k
}

// policyBounds are the bounds of a policy's expressions for one stats
// (-1: none), and whether the policy qualifies for the fast path.
type policyBounds struct {
	vars            map[string]float64
	rules, messages []float64
	total           float64
	ok              bool
}

// costBounds bounds every expression of the program for st. Each
// variable is charged twice: once in the rules' context, once in the
// message expressions'.
func (p *Program) costBounds(st stats) policyBounds {
	f := p.fast
	b := policyBounds{vars: map[string]float64{}, ok: f != nil}
	if f == nil {
		return b
	}
	z := newAnalyzer(st)
	perCall := float64(celconfig.PerCallLimit) / margin
	// charge bounds one expression, charged times. A message expression
	// reaching the per-call limit fails alone (its rule keeps its
	// decision): only its cost counts, against the budget.
	charge := func(u *untracked, times float64) float64 {
		message := times == 0
		times = max(times, 1)
		if u == nil {
			b.ok = false
			return -1
		}
		_, c, ok := z.bound(u.ast)
		if !ok || (c > perCall && !message) {
			b.ok = false
		}
		if !ok {
			return -1
		}
		b.total += times * c
		return c
	}
	for _, v := range p.variables {
		b.vars[v.name] = charge(v.untracked, 2)
		if v.untracked != nil {
			if val, _, ok := z.bound(v.untracked.ast); ok {
				z.vars[v.name] = val
			}
		}
	}
	for _, u := range f.rules {
		b.rules = append(b.rules, charge(u, 1))
	}
	for _, u := range f.messages {
		if u == nil {
			b.messages = append(b.messages, -1)
			continue
		}
		b.messages = append(b.messages, charge(u, 0))
	}
	if b.total > float64(celconfig.RuntimeCELCostBudget)/margin || math.IsNaN(b.total) {
		b.ok = false
	}
	return b
}

// admitsUntracked tells whether the fast path proves every rule admits.
func (p *Program) admitsUntracked(ctx context.Context, in *Input) bool {
	f := p.fast
	if f == nil || ctx.Err() != nil {
		return false
	}
	fi := in.fastInput()
	if !fi.ok || !f.qualifies(p, fi.st) {
		return false
	}
	r := in.values()
	if r.err != nil {
		return false
	}
	e := &policyEval{ctx: ctx, p: p, r: r, untracked: true, shared: fi.shared}
	c := e.newContext()
	for _, u := range f.rules {
		v, err := u.eval(c.act)
		if err != nil || e.failed || v != types.True {
			return false
		}
	}
	f.admits.Add(1)
	return true
}

// admitted are the decisions of a policy whose every rule admits.
func admitted(rules int) []validating.PolicyDecision {
	d := make([]validating.PolicyDecision, rules)
	for i := range d {
		d[i].Action, d[i].Evaluation = validating.ActionAdmit, validating.EvalAdmit
	}
	return d
}

// fastInput is what the fast path reads of an input, built once per input
// and shared by its policies: its stats, and the untracked values of the
// variables that read nothing but the review (by expression text). It
// remembers which objects it was made for: a copy (As) about other objects
// makes its own.
type fastInput struct {
	obj, old         runtime.Object
	objJSON, oldJSON []byte
	kind             schema.GroupVersionKind
	resource         schema.GroupVersionResource
	st               stats
	ok               bool
	shared           map[string]*varResult
}

func (in *Input) fastInput() *fastInput {
	if f := in.fast; f != nil && f.kind == in.Kind && f.resource == in.Resource && sameObject(f.obj, in.Object) &&
		sameObject(f.old, in.OldObject) && sameBytes(f.objJSON, in.ObjectJSON) && sameBytes(f.oldJSON, in.OldObjectJSON) {
		return f
	}
	f := &fastInput{obj: in.Object, old: in.OldObject, objJSON: in.ObjectJSON, oldJSON: in.OldObjectJSON,
		kind: in.Kind, resource: in.Resource, shared: map[string]*varResult{}}
	f.st, f.ok = inputStats(in)
	in.fast = f
	return f
}

// sameObject tells whether a and b are the same pointer (or both nil).
func sameObject(a, b runtime.Object) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Type() == vb.Type() && va.Kind() == reflect.Pointer && va.Pointer() == vb.Pointer()
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (a == nil) == (b == nil) && unsafe.SliceData(a) == unsafe.SliceData(b)
}
