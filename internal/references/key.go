package references

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// keyProgram is an index's key expression, compiled in the apiserver's
// environment for stored expressions with the one variable object.
type keyProgram struct {
	text string
	prog cel.Program
}

func compileKey(text string) (*keyProgram, error) {
	if text == "" {
		return nil, errors.New("an index needs a key expression over object")
	}
	base, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
	if err != nil {
		return nil, fmt.Errorf("the CEL environment: %w", err)
	}
	env, err := base.Extend(cel.Variable("object", cel.DynType))
	if err != nil {
		return nil, fmt.Errorf("the CEL environment: %w", err)
	}
	ast, iss := env.Compile(text)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	prog, err := env.Program(ast, cel.CostLimit(celconfig.PerCallLimit), cel.InterruptCheckFrequency(celconfig.CheckFrequency))
	if err != nil {
		return nil, err
	}
	return &keyProgram{text: text, prog: prog}, nil
}

// keys are the keys of an object: the expression's value, each element of
// it when a list, none when null. An expression that errors on an object
// (a field it lacks, without has()) gives it no key, and the error.
func (k *keyProgram) keys(object ref.Val) ([]string, error) {
	out, _, err := k.prog.Eval(map[string]any{"object": object})
	if err != nil {
		return nil, err
	}
	if out == types.NullValue {
		return nil, nil
	}
	if l, ok := out.(traits.Lister); ok && out.Type() == types.ListType {
		var keys []string
		for it := l.Iterator(); it.HasNext() == types.True; {
			s, err := Key(it.Next())
			if err != nil {
				return nil, err
			}
			keys = append(keys, s)
		}
		return keys, nil
	}
	s, err := Key(out)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

// Key is a CEL value as a key: its canonical JSON (maps by sorted keys,
// numbers by value), so that a map such as a Service's selector is one
// key whatever the order of its entries.
func Key(v ref.Val) (string, error) {
	n, err := native(v, 0)
	if err != nil {
		return "", err
	}
	js, err := json.Marshal(n)
	if err != nil {
		return "", fmt.Errorf("key: %w", err)
	}
	return string(js), nil
}

// maxKeyDepth bounds the nesting of a key.
const maxKeyDepth = 32

func native(v ref.Val, depth int) (any, error) {
	if depth > maxKeyDepth {
		return nil, errors.New("key nested too deeply")
	}
	switch x := v.(type) {
	case types.String:
		return string(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return uint64(x), nil
	case types.Double:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("key %v is not a JSON number", x)
		}
		return float64(x), nil
	case types.Bool:
		return bool(x), nil
	case types.Null:
		return nil, nil
	case *types.Err:
		return nil, x
	}
	if l, ok := v.(traits.Lister); ok && v.Type() == types.ListType {
		var out []any
		for it := l.Iterator(); it.HasNext() == types.True; {
			e, err := native(it.Next(), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	if m, ok := v.(traits.Mapper); ok && v.Type() == types.MapType {
		out := map[string]any{}
		for it := m.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("key: a map key %v is not a string", k)
			}
			e, err := native(m.Get(k), depth+1)
			if err != nil {
				return nil, err
			}
			out[string(ks)] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("key: a %s cannot be a key", v.Type().TypeName())
}
