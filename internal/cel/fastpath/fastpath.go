// Package fastpath decides a policy on a review faster than tollgate's
// tracked evaluation (package cel), with the same decisions, or says it
// cannot: "decide this policy on this review, or give way". It owns the
// untracked programs (cel-go programs planned as the apiserver's compiler
// plans them, without the cost observer), the guards of their receivers,
// and the direct evaluator (Go closures reading the review's JSON,
// without making CEL values); it asks package bound whether cost could
// change a decision, and reads the review's documents through package
// lazy.
//
// How a review flows: package cel compiles a policy with the apiserver's
// libraries and plans it here (New) when every expression has an
// untracked program. On each review, Decide first asks the bound
// (bound.Policy.Qualifies) whether, for this review's sizes, no expression
// can reach the per-call limit and the policy cannot reach the budget, by
// a margin of 10 (bound.Margin). Cost changes a decision only at a limit,
// so then the values decide as the apiserver's validator would. The
// message expressions, which the validator evaluates even when every rule
// admits and whose cost counts against the remaining budget, are bounded
// too. When the sizes bound the rules and variables but not the message
// expressions or the whole policy, the rules run first and the policy is
// bounded again with the sizes of the values of the variables they
// evaluated (bound.Policy.Refined).
//
// Two evaluators, each giving the tracked programs' values:
//   - the direct evaluator (direct.go, ops.go, comprehension.go,
//     decide.go) first, where every rule has a plan: it admits, or denies
//     with the values of the message expressions, or gives up;
//   - else the untracked programs (untracked.go), evaluated in the
//     tracked path's activation (an Evaluation package cel
//     provides, its variables evaluated untracked too), whose only
//     outcome is "every rule admits".
//
// In every other case (a rule false or failing on the untracked programs,
// a variable failing, no bound, sizes too large) Decide gives way and
// package cel evaluates the policy on its tracked path from scratch
// (evaluation is pure), so denials, messages, errors and budget errors
// are the validator's. The operator's --cel-fast-path=false makes package
// cel never ask.
//
// This package imports cel-go, the apiserver's CEL libraries, jsonscan,
// lazy and bound; package cel imports it, never the other way.
package fastpath

import (
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"

	"github.com/tollgate-dev/tollgate/internal/cel/bound"
	"github.com/tollgate-dev/tollgate/internal/cel/lazy"
)

// Policy is a policy planned for the fast path: its untracked programs,
// their bound and the direct evaluator's plans. It is shared by the
// server's concurrent reviews: read only, but for the bound's memos.
type Policy struct {
	bound *bound.Policy
	vars  []Var
	// rules and messages are the rules' and message expressions' untracked
	// programs (nil where a rule has no message expression).
	rules, messages []*Untracked
	// directVars, directRules and directMessages are the variables',
	// rules' and message expressions' plans for the direct evaluator;
	// directRules nil when a rule has none.
	directVars                  []*dplan
	directRules, directMessages []dexpr
}

// Var is a variable of a policy: its name, its expression's text, its
// untracked program, and whether it is independent: it reads no other
// variable (nor the authorizer), so its value is the same in every
// policy evaluated on one review (shared by expression text).
type Var struct {
	Name, Text  string
	Independent bool
	Prog        *Untracked
}

// New plans a policy for the fast path: its variables in order, its
// rules' untracked programs and its message expressions' (nil where a
// rule has none). Every variable and rule must have a program.
func New(vars []Var, rules, messages []*Untracked) *Policy {
	p := &Policy{vars: vars, rules: rules, messages: messages}
	bv := make([]bound.Var, len(vars))
	for i, v := range vars {
		bv[i] = bound.Var{Name: v.Name, AST: v.Prog.AST()}
	}
	asts := func(us []*Untracked) []*celast.AST {
		out := make([]*celast.AST, len(us))
		for i, u := range us {
			out[i] = u.AST()
		}
		return out
	}
	p.bound = bound.NewPolicy(bv, asts(rules), asts(messages))
	var plans [][]dexpr
	p.directVars, plans = directPlans(vars, rules, messages)
	p.directRules, p.directMessages = plans[0], plans[1]
	for _, e := range p.directRules {
		if e == nil {
			p.directRules = nil
			break
		}
	}
	return p
}

// Bound is the policy's bound.
func (p *Policy) Bound() *bound.Policy { return p.bound }

// Rules and Messages are the rules' and message expressions' untracked
// programs (nil where a rule has no message expression).
func (p *Policy) Rules() []*Untracked    { return p.rules }
func (p *Policy) Messages() []*Untracked { return p.messages }

// Direct tells whether every rule has a plan for the direct evaluator,
// which Decide then tries first.
func (p *Policy) Direct() bool { return p.directRules != nil }

// Review is what the fast path reads of one review, made once per input
// and shared by the policies evaluated on it (by one goroutine).
type Review struct {
	// Docs are object's and oldObject's documents, nil for none.
	Docs [2]*lazy.Document
	// Decoded: an object was given decoded, not as JSON; the direct
	// evaluator cannot read it.
	Decoded bool
	// The request's fields the direct evaluator reads.
	Namespace, Name, Operation, SubResource string
	// Stats are the review's sizes (object, oldObject, request and
	// namespaceObject), for the bound.
	Stats bound.Stats
	// direct are the direct evaluator's values of the independent
	// variables, by expression; paths the values it read from each
	// document's object, by path.
	direct map[string]dval
	paths  [2][]dpath
}

// Evaluation is one evaluation of a policy's untracked programs in the
// tracked path's activation (package cel's: object, oldObject,
// request, namespaceObject, and variables evaluated with their untracked
// programs, independent ones shared by the review's policies).
type Evaluation interface {
	// Activation is what the programs evaluate in.
	Activation() interpreter.Activation
	// Failed tells whether a variable failed or a guard marked the
	// evaluation (OffPath): its values then prove nothing.
	Failed() bool
	// Known are the sizes of the values of the variables evaluated so
	// far, by the policy's variables' order (bound.ValueSizes), nested
	// ones if walk.
	Known(walk bool) []bound.Known
}

// How is how Decide decided.
type How uint8

const (
	// GaveWay: not decided; the tracked path must decide.
	GaveWay How = iota
	// DirectAdmit, DirectDeny: the direct evaluator admitted (every rule
	// true) or denied.
	DirectAdmit
	DirectDeny
	// UntrackedAdmit: the untracked programs admitted.
	UntrackedAdmit
)

// Denial is a false rule: its index, and its message expression's
// value when that is a string (Message set), from which the caller
// words the message as the validator does.
type Denial struct {
	Rule       int
	Message    string
	HasMessage bool
}

// Decide decides the policy on r: the false rules (none: every rule
// admits) and how, or GaveWay. untracked starts an evaluation of the
// untracked programs, false when the review's values cannot be made.
func (p *Policy) Decide(r *Review, untracked func() (Evaluation, bool)) ([]Denial, How) {
	q := p.bound.Qualifies(r.Stats)
	if q == bound.Unbounded {
		return nil, GaveWay
	}
	if denied, decided := p.decideDirect(r, q); decided {
		if len(denied) == 0 {
			return nil, DirectAdmit
		}
		return denied, DirectDeny
	}
	u, ok := untracked()
	if !ok {
		return nil, GaveWay
	}
	act := u.Activation()
	for _, rule := range p.rules {
		v, err := rule.Eval(act)
		if err != nil || u.Failed() || v != types.True {
			return nil, GaveWay
		}
	}
	// The message expressions, bounded again with the sizes of the
	// variables the rules evaluated: first their own, then with those
	// nested in them (reading their values costs allocations).
	if q == bound.RulesBounded && !p.bound.Refined(r.Stats, u.Known(false)) && !p.bound.Refined(r.Stats, u.Known(true)) {
		return nil, GaveWay
	}
	return nil, UntrackedAdmit
}
