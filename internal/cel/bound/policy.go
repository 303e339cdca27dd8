package bound

import (
	"math"
	"math/bits"
	"sync"

	celast "github.com/google/cel-go/common/ast"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Margin is how far below each limit the bound must be.
const Margin = 10

// Policy is what the bound reads of a policy: its variables', rules' and
// message expressions' checked syntax trees, and its verdicts memoized
// by sizes rounded up to powers of two. A policy is shared by the
// server's concurrent reviews.
type Policy struct {
	vars            []Var
	rules, messages []*celast.AST
	// qualified memoizes Qualifies by the stats' sizes rounded up to
	// powers of two (key), each a verdict.
	qualified sync.Map
	// refined memoizes Refined's answer by the rounded stats and
	// variables' sizes (roundedKnown).
	refinedMu sync.RWMutex
	refined   map[string]bool
}

// Var is a variable of a policy: its name and checked syntax tree (nil
// for none: then nothing that reads it is bounded).
type Var struct {
	Name string
	AST  *celast.AST
}

// NewPolicy is the bound's view of a policy: its variables in order,
// its rules' and its message expressions' trees (nil where a rule has no
// message expression).
func NewPolicy(vars []Var, rules, messages []*celast.AST) *Policy {
	return &Policy{vars: vars, rules: rules, messages: messages}
}

// Verdict is what a policy's bound says for some sizes.
type Verdict uint8

const (
	// Unbounded: some variable or rule has no bound under the per-call
	// share; the rules cannot run untracked.
	Unbounded Verdict = iota
	// RulesBounded: every variable and rule is bounded under the per-call
	// share, but the message expressions, or the total, are not bounded
	// under their share by the stats alone: the rules may run untracked,
	// and the bound is computed again with the sizes of the variables'
	// values (Refined).
	RulesBounded
	// Bounded: the whole policy is bounded under its shares.
	Bounded
)

// Qualifies is the policy's verdict for st, computed for st's sizes
// rounded up to powers of two (a bound for larger sizes holds for smaller
// ones) and memoized.
func (p *Policy) Qualifies(st Stats) Verdict {
	key, rounded, ok := roundedStats(st)
	if !ok {
		return Unbounded
	}
	if q, ok := p.qualified.Load(key); ok {
		return q.(Verdict)
	}
	q := p.Bounds(rounded, nil).verdict()
	p.qualified.Store(key, q)
	return q
}

// roundedStats are st rounded up to powers of two, and their key.
func roundedStats(st Stats) (uint32, Stats, bool) {
	kl, km, kr := Log2Up(st.L), Log2Up(st.TM), Log2Up(st.TR)
	if max(kl, km, kr) > 40 {
		return 0, Stats{}, false
	}
	return kl<<12 | km<<6 | kr, Stats{float64(uint64(1) << kl), float64(uint64(1) << km), float64(uint64(1) << kr)}, true
}

// Refined tells whether the policy is bounded for st with ks, the sizes
// of the values of the variables already evaluated on this review, by
// the policy's variables' order (Bounds), computed for the sizes rounded
// up to powers of two and memoized.
func (p *Policy) Refined(st Stats, ks []Known) bool {
	sk, rounded, ok := roundedStats(st)
	if !ok {
		return false
	}
	var buf [64]byte
	key, ok := roundedKnown(ks, append(buf[:0], byte(sk>>16), byte(sk>>8), byte(sk)))
	if !ok {
		return false
	}
	p.refinedMu.RLock()
	q, found := p.refined[string(key)]
	p.refinedMu.RUnlock()
	if found {
		return q
	}
	q = p.Bounds(rounded, ks).OK
	p.refinedMu.Lock()
	if p.refined == nil {
		p.refined = map[string]bool{}
	}
	if len(p.refined) < 4096 {
		p.refined[string(key)] = q
	}
	p.refinedMu.Unlock()
	return q
}

// Log2Up is the least k with 2^k >= x, at most 41.
func Log2Up(x float64) uint32 {
	switch {
	case !(x > 1): // NaN too
		return 0
	case x > 1<<40:
		return 41
	}
	return uint32(bits.Len64(uint64(math.Ceil(x)) - 1))
}

// Bounds are the bounds of a policy's expressions for one stats (-1:
// none); Run: every variable and rule is bounded under the per-call
// share; OK: the whole policy qualifies for the fast path.
type Bounds struct {
	Vars            map[string]float64
	Rules, Messages []float64
	Total           float64
	Run, OK         bool
}

func (b Bounds) verdict() Verdict {
	switch {
	case b.OK:
		return Bounded
	case b.Run:
		return RulesBounded
	}
	return Unbounded
}

// Bounds bounds every expression of the policy for st. Each variable is
// charged twice: once in the rules' context, once in the message
// expressions', where the apiserver evaluates it again.
//
// known, when not nil, are the sizes of the values of variables already
// evaluated on this review (untracked, ValueSizes): they replace the
// bounds of those values in what reads them. Their costs are still
// bounded, as the apiserver's evaluations of them in either context are
// charged; only their values are known, and evaluation is pure: the
// tracked programs give the same values, of the same sizes.
func (p *Policy) Bounds(st Stats, known []Known) Bounds {
	b := Bounds{Vars: map[string]float64{}, Run: true}
	z := newAnalyzer(st)
	perCall := float64(celconfig.PerCallLimit) / Margin
	// charge bounds one expression, charged times. A message expression
	// reaching the per-call limit fails alone (its rule keeps its
	// decision): only its cost counts, against the budget.
	messagesOK, messages := true, false
	charge := func(a *celast.AST, times float64) (aval, float64, bool) {
		message := times == 0
		times = max(times, 1)
		z.guarded = !message
		fail := func() {
			if message {
				messagesOK = false
			} else {
				b.Run = false
			}
		}
		if a == nil {
			fail()
			return aval{}, -1, false
		}
		v, c, ok := z.bound(a)
		if !ok || (c > perCall && !message) {
			fail()
		}
		if !ok {
			return aval{}, -1, false
		}
		b.Total += times * c
		return v, c, true
	}
	// guarded are the variables whose bound holds only when evaluated
	// guarded, and not evaluated yet: the message expressions' context
	// evaluates them unguarded.
	var guarded bool
	for i, v := range p.vars {
		val, c, ok := charge(v.AST, 2)
		b.Vars[v.Name] = c
		if known != nil && known[i].set {
			val, ok = known[i].over(val, ok)
		} else if z.guard {
			guarded = true
		}
		if ok {
			z.vars[v.Name] = val
		}
	}
	for _, a := range p.rules {
		_, c, _ := charge(a, 1)
		b.Rules = append(b.Rules, c)
	}
	for _, a := range p.messages {
		if a == nil {
			b.Messages = append(b.Messages, -1)
			continue
		}
		_, c, _ := charge(a, 0)
		b.Messages = append(b.Messages, c)
		messages = true
	}
	b.OK = b.Run && messagesOK && !(guarded && messages) && b.Total <= float64(celconfig.RuntimeCELCostBudget)/Margin && !math.IsNaN(b.Total)
	return b
}
