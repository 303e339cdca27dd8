package fastpath

import (
	"fmt"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/containers"
	"github.com/google/cel-go/common/decls"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
)

// Untracked is an expression planned as the apiserver's compiler plans
// it, without the cost observer. A tracked program wraps every node to
// count its cost, which costs more than evaluating it. The environment's
// program options always ask for cost tracking, and no later option can
// unset it. So the untracked program is planned with cel-go's interpreter
// directly: the environment's functions, adapter and provider, and the
// planner options its libraries add (libraries.go). Its values and errors
// are the tracked program's, except that it never runs out of cost: the
// fast path uses it only where a bound (bound.go) proves no limit can be
// reached. Receivers of calls that the bound charges only for a string
// are guarded (guard.go).
type Untracked struct {
	ast  *celast.AST
	prog interpreter.InterpretableV2
}

// compiledEnv is what planning reads of the environment a program was
// compiled in. cel-go's program embeds its *cel.Env, so a program the
// apiserver's compiler made has these methods. TestPlanReadsTheEnvironment
// fails if a cel-go upgrade ends that.
type compiledEnv interface {
	Compile(txt string) (*cel.Ast, *cel.Issues)
	Functions() map[string]*decls.FunctionDecl
	CELTypeAdapter() types.Adapter
	CELTypeProvider() types.Provider
	Libraries() []string
}

// untrackedOf compiles text again in the environment prog (a tracked
// program the apiserver's compiler just made of text) was planned in, and
// plans it untracked. It must be called right after the compiler made
// prog: the environment's variables type gains fields as variables are
// compiled.
func untrackedOf(prog cel.Program, text string) (*Untracked, error) {
	env, ok := prog.(compiledEnv)
	if !ok {
		return nil, fmt.Errorf("no environment in %T", prog)
	}
	opts, err := plannerOptions(env.Libraries())
	if err != nil {
		return nil, err
	}
	checked, iss := env.Compile(text)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	ast := checked.NativeRep()
	disp := interpreter.NewDispatcher()
	for name, fn := range env.Functions() {
		bindings, err := fn.Bindings()
		if err != nil {
			return nil, fmt.Errorf("function %s: %w", name, err)
		}
		if err := disp.Add(bindings...); err != nil {
			return nil, fmt.Errorf("function %s: %w", name, err)
		}
	}
	// The apiserver's environments keep the default container.
	container := containers.DefaultContainer
	attrs := interpreter.NewAttributeFactory(container, env.CELTypeAdapter(), env.CELTypeProvider())
	interp := interpreter.NewInterpreter(disp, container, env.CELTypeProvider(), env.CELTypeAdapter(), attrs)
	// In the order cel-go's env.Program plans them: the libraries'
	// decorators, the caller's, constant folding, then regex constants.
	opts.decorators = append(opts.decorators, interpreter.CustomDecoratorV2(guardReceivers(ast)), interpreter.Optimize(),
		interpreter.CompileRegexConstants(append(opts.regexes, interpreter.MatchesRegexOptimization)...))
	p, err := interp.NewInterpretable(ast, opts.decorators...)
	if err != nil {
		return nil, err
	}
	return &Untracked{ast: ast, prog: p}, nil
}

// AST is the expression's checked syntax tree; nil for no program.
func (u *Untracked) AST() *celast.AST {
	if u == nil {
		return nil
	}
	return u.ast
}

// Eval evaluates the expression as the tracked program's Eval does: an
// error value is returned as the error, a panic as an internal error. It
// does not watch a context: its evaluations are bounded (a tenth of the
// per-call limit), and the fast path checks ctx before; a tracked
// evaluation too finishes unless ctx ends within it.
func (u *Untracked) Eval(act interpreter.Activation) (out ref.Val, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("internal error: %v", r)
		}
	}()
	frame, err := interpreter.NewExecutionFrame(act)
	if err != nil {
		return nil, err
	}
	defer frame.Close()
	out = u.prog.Exec(frame)
	if types.IsError(out) {
		err = out.(*types.Err)
	}
	return out, err
}

// Plan plans an expression the apiserver's compiler just compiled
// untracked, nil if it cannot.
func Plan(res plugincel.CompilationResult) *Untracked {
	if res.Error != nil || res.Program == nil || res.ExpressionAccessor == nil {
		return nil
	}
	u, err := untrackedOf(res.Program, res.ExpressionAccessor.GetExpression())
	if err != nil {
		return nil
	}
	return u
}
