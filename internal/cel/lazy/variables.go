package lazy

import (
	"fmt"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// Variables are a policy's variables as one evaluation context reads
// them: how many, their names in order, and the value of one by name,
// resolved (evaluated, or reused) on read; false when there is none of
// that name.
type Variables interface {
	Len() int
	Name(i int) string
	Variable(name string) (ref.Val, bool)
}

// MapValue is the CEL value of `variables`: the apiserver's lazy.MapValue
// of type kubernetes.variables (k8s.io/apiserver/pkg/cel/lazy), its
// values read from vars. It has that type's name and its package's, which
// a message printing a value's Go type prints ("invalid qualifier type:
// *lazy.MapValue").
type MapValue struct{ vars Variables }

// NewMapValue is the variables map of vars.
func NewMapValue(vars Variables) *MapValue { return &MapValue{vars: vars} }

var (
	//lint:ignore SA1019 the type lazy.MapValue gives the apiserver's variables
	variablesType               = types.NewTypeValue("kubernetes.variables", traits.IndexerType|traits.FieldTesterType|traits.IterableType)
	_             ref.Val       = (*MapValue)(nil)
	_             traits.Mapper = (*MapValue)(nil)
)

func (m *MapValue) Contains(key ref.Val) ref.Val {
	v, found := m.Find(key)
	if v != nil && types.IsUnknownOrError(v) {
		return v
	}
	return types.Bool(found)
}

func (m *MapValue) Iterator() traits.Iterator { return &iterator{parent: m} }

func (m *MapValue) Size() ref.Val { return types.Int(m.vars.Len()) }

func (m *MapValue) ConvertToNative(typeDesc reflect.Type) (any, error) {
	return nil, fmt.Errorf("disallowed conversion from %q to %q", variablesType.TypeName(), typeDesc.Name())
}

func (m *MapValue) ConvertToType(typeVal ref.Type) ref.Val {
	switch typeVal {
	case variablesType:
		return m
	case types.TypeType:
		return variablesType
	}
	return types.NewErr("disallowed conversion from %q to %q", variablesType.TypeName(), typeVal.TypeName())
}

func (m *MapValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(*MapValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(m == o)
}

func (m *MapValue) Type() ref.Type { return variablesType }

func (m *MapValue) Value() any { return types.NoSuchOverloadErr() }

func (m *MapValue) Find(key ref.Val) (ref.Val, bool) {
	n, ok := key.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(n), true
	}
	name, ok := apiservercel.Unescape(string(n))
	if !ok {
		return nil, false
	}
	return m.vars.Variable(name)
}

func (m *MapValue) Get(key ref.Val) ref.Val {
	v, found := m.Find(key)
	if found {
		return v
	}
	return types.ValOrErr(key, "no such key: %v", key)
}

// iterator iterates over the variables' values, in order, as the
// apiserver's lazy.MapValue's iterator (whose name it has).
type iterator struct {
	parent *MapValue
	index  int
}

func (i *iterator) ConvertToNative(typeDesc reflect.Type) (any, error) {
	return nil, fmt.Errorf("disallowed conversion to %q", typeDesc.Name())
}

func (i *iterator) ConvertToType(typeValue ref.Type) ref.Val {
	return types.NewErr("disallowed conversion o %q", typeValue.TypeName())
}

func (i *iterator) Equal(other ref.Val) ref.Val {
	o, ok := other.(*iterator)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(o == i)
}

func (i *iterator) Type() ref.Type { return types.IteratorType }

func (i *iterator) Value() any { return nil }

func (i *iterator) HasNext() ref.Val { return types.Bool(i.index < i.parent.vars.Len()) }

func (i *iterator) Next() ref.Val {
	ret := i.parent.Get(types.String(i.parent.vars.Name(i.index)))
	i.index++
	return ret
}
