package fastpath

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Untracked is an expression planned as the apiserver's compiler plans it
// (env.Program on the same environment and checked AST, with the same
// interrupt checks: the same dispatcher, function bindings, adapter,
// decorators such as the optional library's, constant folding and regex
// precompilation), without the cost observer: every node of a tracked
// program is wrapped to count its cost, which costs more than evaluating
// it. The environment's program options always ask for cost tracking
// (cel.EvalOptions(OptTrackCost), which later options cannot unset through
// cel-go's API); untrack, applied last, clears that one flag. Its values
// and errors are the tracked program's, except that it never runs out of
// cost: the fast path uses it only where a bound (bound.go) proves no
// limit can be reached. Receivers of calls that the bound charges only
// for a string are guarded (guard.go): it must be evaluated under an
// activation, which they mark when not a string.
type Untracked struct {
	ast  *celast.AST
	prog cel.Program
}

// untrackedOf compiles text again with the environment prog (a tracked
// program the apiserver's compiler just made of text) was planned in, and
// plans it untracked. It must be called right after the compiler made
// prog: the environment's variables type gains fields as variables are
// compiled.
func untrackedOf(prog cel.Program, text string) (*Untracked, error) {
	env := envOf(prog)
	if env == nil {
		return nil, fmt.Errorf("no environment in %T", prog)
	}
	checked, iss := env.Compile(text)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	untrack, err := untrackOption()
	if err != nil {
		return nil, err
	}
	p, err := env.Program(checked, cel.InterruptCheckFrequency(celconfig.CheckFrequency), cel.CustomDecoratorV2(guardReceivers(checked.NativeRep())), untrack)
	if err != nil {
		return nil, err
	}
	return &Untracked{ast: checked.NativeRep(), prog: p}, nil
}

// untrackOption is a program option clearing OptTrackCost from the
// program's evaluation options (cel-go's prog.evalOpts, v0.29), made by
// reflection: cel.ProgramOption is a function of cel-go's unexported
// program type.
func untrackOption() (cel.ProgramOption, error) {
	typ := reflect.TypeOf(cel.ProgramOption(nil))
	if typ.NumIn() != 1 || typ.In(0).Kind() != reflect.Pointer || typ.NumOut() != 2 {
		return nil, fmt.Errorf("unexpected cel.ProgramOption %v", typ)
	}
	field, ok := typ.In(0).Elem().FieldByName("evalOpts")
	if !ok || field.Type != reflect.TypeOf(cel.OptTrackCost) {
		return nil, fmt.Errorf("no evalOpts in %v", typ.In(0))
	}
	fn := reflect.MakeFunc(typ, func(args []reflect.Value) []reflect.Value {
		opts := (*cel.EvalOption)(unsafe.Add(args[0].UnsafePointer(), field.Offset))
		*opts &^= cel.OptTrackCost
		return []reflect.Value{args[0], reflect.Zero(typ.Out(1))}
	})
	return fn.Interface().(cel.ProgramOption), nil
}

// envOf is the environment a cel-go program was planned in: the exported
// field Env that cel-go's program type embeds.
func envOf(prog cel.Program) *cel.Env {
	v := reflect.ValueOf(prog)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("Env")
	if !f.IsValid() || !f.CanInterface() {
		return nil
	}
	env, _ := f.Interface().(*cel.Env)
	return env
}

// AST is the expression's checked syntax tree; nil for no program.
func (u *Untracked) AST() *celast.AST {
	if u == nil {
		return nil
	}
	return u.ast
}

// Eval evaluates the expression as the tracked program's ContextEval does,
// but without watching ctx: its evaluations are bounded (a tenth of the
// per-call limit), and the fast path checks ctx before; a tracked
// evaluation too finishes unless ctx ends within it.
func (u *Untracked) Eval(act interpreter.Activation) (ref.Val, error) {
	out, _, err := u.prog.Eval(act)
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
