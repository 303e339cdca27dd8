package cel

import (
	"context"
	"math"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"

	"github.com/tollgate-dev/tollgate/internal/cel/fastpath"
	"github.com/tollgate-dev/tollgate/internal/cel/lazy"
)

// variable is a compiled variable of a policy. independent: its expression
// reads no other variable (nor the authorizer), so its value and cost are
// the same in every policy evaluated on one review.
type variable struct {
	name        string
	result      plugincel.CompilationResult
	independent bool
	// untracked is the expression planned for the fast path.
	untracked *fastpath.Untracked
}

// varResult is what evaluating a variable gave: the value or error, its own
// cost (not its dependencies'), and the variables its evaluation read, in
// order, so that reusing it charges what evaluating it again would.
type varResult struct {
	val      ref.Val
	err      error
	noDetail bool // no evaluation details: the apiserver reports no cost
	noCost   bool // no actual cost: likewise
	cost     int64
	deps     []string
}

// valueFor is the variable's value as the apiserver's variableAccessor
// gives it under name.
func (r *varResult) valueFor(name string) ref.Val {
	switch {
	case r.noDetail:
		return types.NewErr("unable to get evaluation details of variable %q", name)
	case r.noCost:
		return types.NewErr("unable to calculate cost of variable %q", name)
	case r.err != nil:
		return types.NewErr("composited variable %q fails to evaluate: %v", name, r.err)
	}
	return r.val
}

// policyEval is one evaluation of a program: the variables evaluated so
// far in either of its contexts (validations, then message expressions).
// untracked: the fast path's, evaluating variables with their untracked
// programs (no cost), sharing them through shared (the fast path's, not
// the review's: those carry costs), and noting in failed any variable
// that fails.
type policyEval struct {
	ctx       context.Context
	p         *Program
	r         *review
	done      map[string]*varResult
	untracked bool
	failed    bool
	shared    map[string]*varResult
}

// varContext is the apiserver's compositionContext of one ForInput: each
// variable is charged once, when first read, as if evaluated there.
type varContext struct {
	e      *policyEval
	act    *activation
	values map[string]ref.Val
	cost   int64
	rec    *[]string // the reads of the variable being evaluated
}

func (e *policyEval) newContext() *varContext {
	c := &varContext{e: e}
	c.act = &activation{r: e.r, variables: lazy.NewMapValue(c)}
	if decls := e.p.spec.References; len(decls) > 0 {
		c.act.references = referencesValue(decls, e.r.refStore, e.r.self)
	}
	return c
}

func (c *varContext) getAndResetCost() int64 {
	cost := c.cost
	c.cost = 0
	return cost
}

// resolve reads a variable in this context: evaluated if no context of
// the policy evaluation (nor, when independent, of the review) has, else
// reused, with its cost and its dependencies' charged as evaluating it
// again would.
func (c *varContext) resolve(v *variable) ref.Val {
	if c.rec != nil {
		*c.rec = append(*c.rec, v.name)
	}
	if val, ok := c.values[v.name]; ok {
		return val
	}
	res := c.e.done[v.name]
	if res == nil {
		if v.independent {
			res = c.e.shared[v.result.ExpressionAccessor.GetExpression()]
		}
		if res == nil {
			res = c.evaluate(v)
		} else {
			c.replay(res)
		}
		if c.e.done == nil {
			c.e.done = map[string]*varResult{}
		}
		c.e.done[v.name] = res
	} else {
		c.replay(res)
	}
	if !res.noDetail && !res.noCost {
		c.cost += res.cost
	}
	if c.e.untracked && (res.err != nil || res.noDetail || res.noCost) {
		c.e.failed = true
	}
	val := res.valueFor(v.name)
	if c.values == nil {
		c.values = map[string]ref.Val{}
	}
	c.values[v.name] = val
	return val
}

// evaluate evaluates a variable as the apiserver's variableAccessor does.
func (c *varContext) evaluate(v *variable) *varResult {
	if v.result.Error != nil {
		return &varResult{val: types.NewErr("composited variable %q fails to compile: %v", v.name, v.result.Error), noDetail: true}
	}
	saved := c.rec
	var deps []string
	c.rec = &deps
	if c.e.untracked {
		if v.untracked == nil {
			c.rec = saved
			return &varResult{val: types.NewErr("variable %q has no untracked program", v.name), noDetail: true}
		}
		before := c.act.offPath
		c.act.offPath = false
		val, err := v.untracked.Eval(c.act)
		c.rec = saved
		res := &varResult{val: val, err: err, deps: deps}
		if c.act.offPath {
			// Its bound does not hold: whatever reads it, in any policy
			// sharing it, leaves the fast path.
			res.err = fastpath.ErrOffPath
		}
		c.act.offPath = c.act.offPath || before
		if v.independent && len(deps) == 0 {
			c.e.shared[v.result.ExpressionAccessor.GetExpression()] = res
		}
		return res
	}
	val, details, err := v.result.Program.ContextEval(c.e.ctx, c.act)
	c.rec = saved
	res := &varResult{val: val, err: err, deps: deps}
	switch {
	case details == nil:
		res.noDetail = true
	case details.ActualCost() == nil:
		res.noCost = true
	default:
		cost := *details.ActualCost()
		res.cost = int64(cost)
		if cost > math.MaxInt64 {
			res.cost = math.MaxInt64
		}
	}
	if v.independent && len(deps) == 0 {
		c.e.shared[v.result.ExpressionAccessor.GetExpression()] = res
	}
	return res
}

// replay reads what the variable's evaluation read, unrecorded.
func (c *varContext) replay(res *varResult) {
	saved := c.rec
	c.rec = nil
	for _, d := range res.deps {
		if v := c.e.p.variable(d); v != nil {
			c.resolve(v)
		}
	}
	c.rec = saved
}

// Len, Name and Variable are the context's variables as the variables
// map (lazy.MapValue) reads them.
func (c *varContext) Len() int { return len(c.e.p.variables) }

func (c *varContext) Name(i int) string { return c.e.p.variables[i].name }

func (c *varContext) Variable(name string) (ref.Val, bool) {
	v := c.e.p.variable(name)
	if v == nil {
		return nil, false
	}
	return c.resolve(v), true
}
