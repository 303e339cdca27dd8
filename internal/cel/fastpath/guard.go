package fastpath

import (
	"errors"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"github.com/tollgate-dev/tollgate/internal/cel/bound"
)

// Calls on a receiver whose type the checker does not know (dyn) may
// dispatch at run time to any overload of the name. indexOf and
// lastIndexOf have the string library's (ext strings: a traversal of the
// string, cheap) and Kubernetes' list library's (list_a_index_of_int,
// list_a_last_index_of_int); the Kubernetes cost estimator charges both
// the traversal of the receiver, which for a list is its whole depth:
// nothing in the sizes (stats) bounds that. The untracked programs guard
// such a receiver: when it is not a string, the evaluation is marked off
// the fast path (offPath), which then gives way to the tracked path. The
// bound (bound.go) of a rule or variable, which the fast path evaluates
// guarded, charges such a call as on a string; a message expression's,
// which the fast path does not evaluate, has none.

// ErrOffPath is the error of an untracked variable whose evaluation a
// guard marked.
var ErrOffPath = errors.New("a guarded receiver is not a string: off the fast path")

// OffPathName is a name no CEL expression can read: resolving it gives
// the root activation of an untracked evaluation, an OffPath.
const OffPathName = "\x00offPath"

// OffPath is the root activation of an untracked evaluation, which a
// guard marks when a guarded receiver is not a string.
type OffPath interface{ MarkOffPath() }

// guardReceivers is a decorator wrapping the receivers of the guardable
// calls of a: a string receiver passes, any other marks the evaluation.
func guardReceivers(a *celast.AST) interpreter.InterpretableDecoratorV2 {
	receivers := map[int64]bool{}
	celast.PostOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.CallKind {
			return
		}
		c := e.AsCall()
		switch c.FunctionName() {
		case "indexOf", "lastIndexOf":
			if c.IsMemberFunction() && bound.Guardable(a.GetOverloadIDs(e.ID())) {
				receivers[c.Target().ID()] = true
			}
		}
	}))
	return func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		if len(receivers) == 0 || !receivers[i.ID()] {
			return i, nil
		}
		return &stringReceiver{i}, nil
	}
}

// stringReceiver is a guarded receiver.
type stringReceiver struct{ interpreter.InterpretableV2 }

func (g *stringReceiver) Eval(act interpreter.Activation) ref.Val {
	return check(act, g.InterpretableV2.Eval(act))
}

func (g *stringReceiver) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	return check(frame, g.InterpretableV2.Exec(frame))
}

func check(act interpreter.Activation, v ref.Val) ref.Val {
	if _, ok := v.(types.String); !ok {
		if a, found := act.ResolveName(OffPathName); found {
			if a, ok := a.(OffPath); ok {
				a.MarkOffPath()
			}
		}
	}
	return v
}
