package fastpath

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// The optional library's or and orValue evaluate their argument only when
// the receiver is empty. cel-go's library plans that with a decorator of
// its own, which untracked programs cannot take from the environment;
// decorateOptionalOr is the same decorator. TestOptionalOrAsTracked holds
// it to the library's, on receivers with and without values, errors and
// arguments that fail.
func decorateOptionalOr(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok || len(call.Args()) != 2 {
		return i, nil
	}
	var unwrap bool
	switch call.Function() {
	case "or":
		if id := call.OverloadID(); id != "" && id != "optional_or_optional" {
			return i, nil
		}
	case "orValue":
		if id := call.OverloadID(); id != "" && id != "optional_orValue_value" {
			return i, nil
		}
		unwrap = true
	default:
		return i, nil
	}
	return &optionalOr{id: call.ID(), lhs: call.Args()[0], rhs: call.Args()[1], unwrap: unwrap}, nil
}

// optionalOr is lhs when it has a value (its value, with unwrap: orValue),
// else rhs, evaluated only then.
type optionalOr struct {
	id       int64
	lhs, rhs interpreter.InterpretableV2
	unwrap   bool
}

func (o *optionalOr) ID() int64 { return o.id }

func (o *optionalOr) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	lhs := o.lhs.Exec(frame)
	switch v := lhs.(type) {
	case *types.Err, *types.Unknown:
		return lhs
	case *types.Optional:
		if !v.HasValue() {
			return o.rhs.Exec(frame)
		}
		if o.unwrap {
			return v.GetValue()
		}
		return lhs
	default:
		return types.NoSuchOverloadErr()
	}
}

func (o *optionalOr) Eval(act interpreter.Activation) ref.Val {
	return o.Exec(interpreter.AsFrame(act))
}
