package cel

import (
	"context"
	"math"
	"math/bits"
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
// without cost tracking, when a bound (bound.go) proves that for this
// review's sizes no expression can reach the per-call limit and the
// policy cannot reach the budget, by a margin of 10. Cost changes a
// decision only at a limit, so the values decide as the apiserver's
// validator would. The message expressions, which the validator
// evaluates even when every rule admits and whose cost counts against the
// remaining budget, are bounded too. When the sizes bound the rules and
// variables but not the message expressions or the whole policy, the
// rules run first and the policy is bounded again with the sizes of the
// values of the variables they evaluated (costBounds with values).
//
// Two evaluators, each giving the tracked programs' values:
//   - the direct evaluator (direct.go, directpath.go) first, where every
//     rule has a plan: it admits, or denies with the message the
//     validator words, or gives up;
//   - else the untracked programs (untracked.go), whose only outcome is
//     "every rule admits".
//
// In every other case (a rule false or failing on the untracked programs,
// a variable failing, no bound, sizes too large) the policy is evaluated
// again on the tracked path from scratch (evaluation is pure), so
// denials, messages, errors and budget errors are the validator's.

// margin is how far below each limit the bound must be.
const margin = 10

// fastPath is what a program needs for the fast path.
type fastPath struct {
	// rules and messages are the rules' and message expressions' untracked
	// programs (nil where a rule has no message expression); the
	// variables' are on the variables.
	rules, messages []*untracked
	// directVars, directRules and directMessages are the variables',
	// rules' and message expressions' plans for the direct evaluator
	// (direct.go); directRules nil when a rule has none.
	directVars                  []*dplan
	directRules, directMessages []dexpr
	// admitted are the decisions when every rule admits.
	admitted []validating.PolicyDecision
	// qualified memoizes qualifies by the stats' sizes rounded up to
	// powers of two (key), each a verdict.
	qualified sync.Map
	// refined memoizes the refined bound's ok by the rounded stats and
	// variables' sizes (roundedKnown).
	refinedMu sync.RWMutex
	refined   map[string]bool
	// admits counts the evaluations the fast path admitted, direct those
	// the direct evaluator did, denials those it denied.
	admits, direct, denials atomic.Int64
}

// verdict is what a policy's bound says for some sizes.
type verdict uint8

const (
	// unbounded: some variable or rule has no bound under the per-call
	// share; the rules cannot run untracked.
	unbounded verdict = iota
	// rulesBounded: every variable and rule is bounded under the per-call
	// share, but the message expressions, or the total, are not bounded
	// under their share by the stats alone: the rules may run untracked,
	// and the bound is computed again with the sizes of the variables'
	// values (refined).
	rulesBounded
	// bounded: the whole policy is bounded under its shares.
	bounded
)

// qualifies is the policy's verdict for st, computed for st's sizes
// rounded up to powers of two (a bound for larger sizes holds for smaller
// ones) and memoized.
func (f *fastPath) qualifies(p *Program, st stats) verdict {
	key, rounded, ok := roundedStats(st)
	if !ok {
		return unbounded
	}
	if q, ok := f.qualified.Load(key); ok {
		return q.(verdict)
	}
	q := p.costBounds(rounded, nil).verdict()
	f.qualified.Store(key, q)
	return q
}

// roundedStats are st rounded up to powers of two, and their key.
func roundedStats(st stats) (uint32, stats, bool) {
	kl, km, kr := log2Up(st.l), log2Up(st.tm), log2Up(st.tr)
	if max(kl, km, kr) > 40 {
		return 0, stats{}, false
	}
	return kl<<12 | km<<6 | kr, stats{float64(uint64(1) << kl), float64(uint64(1) << km), float64(uint64(1) << kr)}, true
}

// refinedOK tells whether the policy is bounded for st with the values
// of the variables in done (costBounds): first with their own sizes
// alone, then with their nested ones too (reading their values costs
// allocations), each computed for the sizes rounded up to powers of two
// and memoized.
func (f *fastPath) refinedOK(p *Program, st stats, done map[string]*varResult) bool {
	return f.refinedWith(p, st, p.knownSizes(done, false)) || f.refinedWith(p, st, p.knownSizes(done, true))
}

func (f *fastPath) refinedWith(p *Program, st stats, ks []known) bool {
	sk, rounded, ok := roundedStats(st)
	if !ok {
		return false
	}
	var buf [64]byte
	key, ok := roundedKnown(ks, append(buf[:0], byte(sk>>16), byte(sk>>8), byte(sk)))
	if !ok {
		return false
	}
	f.refinedMu.RLock()
	q, found := f.refined[string(key)]
	f.refinedMu.RUnlock()
	if found {
		return q
	}
	q = p.costBounds(rounded, ks).ok
	f.refinedMu.Lock()
	if f.refined == nil {
		f.refined = map[string]bool{}
	}
	if len(f.refined) < 4096 {
		f.refined[string(key)] = q
	}
	f.refinedMu.Unlock()
	return q
}

// log2Up is the least k with 2^k >= x, at most 41.
func log2Up(x float64) uint32 {
	switch {
	case !(x > 1): // NaN too
		return 0
	case x > 1<<40:
		return 41
	}
	return uint32(bits.Len64(uint64(math.Ceil(x)) - 1))
}

// policyBounds are the bounds of a policy's expressions for one stats
// (-1: none); run: every variable and rule is bounded under the per-call
// share; ok: the whole policy qualifies for the fast path.
type policyBounds struct {
	vars            map[string]float64
	rules, messages []float64
	total           float64
	run, ok         bool
}

func (b policyBounds) verdict() verdict {
	switch {
	case b.ok:
		return bounded
	case b.run:
		return rulesBounded
	}
	return unbounded
}

// costBounds bounds every expression of the program for st. Each
// variable is charged twice: once in the rules' context, once in the
// message expressions', where the apiserver evaluates it again.
//
// known, when not nil, are the sizes of the values of variables already
// evaluated on this review (untracked, knownSizes): they replace the
// bounds of those values in what reads them. Their costs are still bounded, as the
// apiserver's evaluations of them in either context are charged; only
// their values are known, and evaluation is pure: the tracked programs
// give the same values, of the same sizes.
func (p *Program) costBounds(st stats, known []known) policyBounds {
	f := p.fast
	b := policyBounds{vars: map[string]float64{}, run: f != nil}
	if f == nil {
		return b
	}
	z := newAnalyzer(st)
	perCall := float64(celconfig.PerCallLimit) / margin
	// charge bounds one expression, charged times. A message expression
	// reaching the per-call limit fails alone (its rule keeps its
	// decision): only its cost counts, against the budget.
	messagesOK, messages := true, false
	charge := func(u *untracked, times float64) (aval, float64, bool) {
		message := times == 0
		times = max(times, 1)
		z.guarded = !message
		fail := func() {
			if message {
				messagesOK = false
			} else {
				b.run = false
			}
		}
		if u == nil {
			fail()
			return aval{}, -1, false
		}
		v, c, ok := z.bound(u.ast)
		if !ok || (c > perCall && !message) {
			fail()
		}
		if !ok {
			return aval{}, -1, false
		}
		b.total += times * c
		return v, c, true
	}
	// guarded are the variables whose bound holds only when evaluated
	// guarded, and not evaluated yet: the message expressions' context
	// evaluates them unguarded.
	var guarded bool
	for i, v := range p.variables {
		val, c, ok := charge(v.untracked, 2)
		b.vars[v.name] = c
		if known != nil && known[i].set {
			val, ok = known[i].over(val, ok)
		} else if z.guard {
			guarded = true
		}
		if ok {
			z.vars[v.name] = val
		}
	}
	for _, u := range f.rules {
		_, c, _ := charge(u, 1)
		b.rules = append(b.rules, c)
	}
	for _, u := range f.messages {
		if u == nil {
			b.messages = append(b.messages, -1)
			continue
		}
		_, c, _ := charge(u, 0)
		b.messages = append(b.messages, c)
		messages = true
	}
	b.ok = b.run && messagesOK && !(guarded && messages) && b.total <= float64(celconfig.RuntimeCELCostBudget)/margin && !math.IsNaN(b.total)
	return b
}

// decideFast is the fast path: the decisions of the policy, nil when
// the tracked path must decide. The direct evaluator first
// (decideDirect), which admits or denies; else the untracked programs,
// which only admit: every rule true.
func (p *Program) decideFast(ctx context.Context, in *Input) []validating.PolicyDecision {
	f := p.fast
	if f == nil || ctx.Err() != nil {
		return nil
	}
	fi := in.fastInput()
	if !fi.ok {
		return nil
	}
	q := f.qualifies(p, fi.st)
	if q == unbounded {
		return nil
	}
	// The direct evaluator reads the documents alone, not the CEL values
	// of the objects, request and namespace (values), made only if cel-go
	// must evaluate.
	if in.Check() != nil {
		return nil
	}
	if d, admits, decided := p.decideDirect(in, fi, q); decided {
		if admits {
			f.admits.Add(1)
			f.direct.Add(1)
		} else {
			f.denials.Add(1)
		}
		return d
	}
	r := in.values()
	if r.err != nil {
		return nil
	}
	e := &policyEval{ctx: ctx, p: p, r: r, untracked: true, shared: fi.shared}
	c := e.newContext()
	for _, u := range f.rules {
		v, err := u.eval(c.act)
		if err != nil || e.failed || c.act.offPath || v != types.True {
			return nil
		}
	}
	// The message expressions, bounded again with the sizes of the
	// variables the rules evaluated.
	if q == rulesBounded && !f.refinedOK(p, fi.st, e.done) {
		return nil
	}
	f.admits.Add(1)
	return f.admitted
}

// admitted are the decisions of a policy whose every rule admits, made
// once per program (Compile): read, never written.
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
	// direct are the direct evaluator's values of the independent
	// variables, by expression.
	direct map[string]dval
}

func (in *Input) fastInput() *fastInput {
	if f := in.fast; f != nil && f.kind == in.Kind && f.resource == in.Resource && sameObject(f.obj, in.Object) &&
		sameObject(f.old, in.OldObject) && sameBytes(f.objJSON, in.ObjectJSON) && sameBytes(f.oldJSON, in.OldObjectJSON) {
		return f
	}
	f := &fastInput{obj: in.Object, old: in.OldObject, objJSON: in.ObjectJSON, oldJSON: in.OldObjectJSON,
		kind: in.Kind, resource: in.Resource, shared: map[string]*varResult{}, direct: map[string]dval{}}
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
