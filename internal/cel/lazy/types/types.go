// Package types holds the lazy map and list of package lazy, named as
// cel-go names its own map and list: package types, baseMap and baseList.
//
// The names are the point. cel-go and the apiserver's libraries print a
// value's Go type in some of their messages (%T): a rule indexing with an
// object or array, `[1][object.spec.m]`, fails in the apiserver with
// "invalid qualifier type: *types.baseMap" (cel-go's map, which the
// apiserver's validator makes of a decoded object), and a map key of the
// wrong type in a request's map with "unsupported map key type: %T". A
// value's Go type is its package's name and its own, so these values,
// wherever a message prints them, print the apiserver's words, not
// tollgate's.
//
// Each wraps cel-go's own map or list of one level of an object or array
// (types.NewStringInterfaceMap, types.NewDynamicList, with the review's
// adapter, which makes the nested objects and arrays on first read), and
// replaces the methods that would hand out the level's raw Go values (see
// package lazy, lazy.go, for why the values are cel-go's).
package types

import (
	"fmt"
	"reflect"

	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Decoder makes the whole value of an object's or array's JSON, as the
// default adapter wraps its decoded Go value.
type Decoder func(raw []byte) ref.Val

// celMap and celList are the methods of cel-go's map and list.
type celMap interface {
	traits.Mapper
	traits.Foldable
	traits.Zeroer
	fmt.Stringer
}

type celList interface {
	traits.Lister
	traits.Foldable
	traits.Zeroer
	fmt.Stringer
}

// baseMap is an object of the review as a CEL map: its first level
// (nested objects and arrays as what adapter makes values of), and the
// whole object.
type baseMap struct {
	celMap
	level   map[string]any
	adapter celtypes.Adapter
	whole   whole
}

// baseList is an array of the review as a CEL list.
type baseList struct {
	celList
	level   []any
	adapter celtypes.Adapter
	whole   whole
}

// whole is an object's or array's JSON, raw, and the whole value decode
// makes of it, when first asked.
type whole struct {
	raw    []byte
	decode Decoder
	full   ref.Val
}

// NewMap is the lazy map of the object raw, of which level is the first
// level as adapter reads it.
func NewMap(level map[string]any, adapter celtypes.Adapter, raw []byte, decode Decoder) ref.Val {
	return &baseMap{celMap: celtypes.NewStringInterfaceMap(adapter, level).(celMap), level: level, adapter: adapter, whole: whole{raw: raw, decode: decode}}
}

// NewList is the lazy list of the array raw, of which level is the
// elements as adapter reads them.
func NewList(level []any, adapter celtypes.Adapter, raw []byte, decode Decoder) ref.Val {
	return &baseList{celList: celtypes.NewDynamicList(adapter, level).(celList), level: level, adapter: adapter, whole: whole{raw: raw, decode: decode}}
}

// IsLazy tells whether v is a lazy map or list (NewMap, NewList).
func IsLazy(v any) bool {
	switch v.(type) {
	case *baseMap, *baseList:
		return true
	}
	return false
}

func (w *whole) value() ref.Val {
	if w.full == nil {
		w.full = w.decode(w.raw)
	}
	return w.full
}

// native is the whole value's ConvertToNative, self where it would
// return its own wrapper.
func (w *whole) native(self ref.Val, t reflect.Type) (any, error) {
	full := w.value()
	if celtypes.IsError(full) {
		return nil, full.(*celtypes.Err)
	}
	v, err := full.ConvertToNative(t)
	if err == nil {
		if x, ok := v.(ref.Val); ok && x == full {
			return self, nil
		}
	}
	return v, err
}

// Value is the object as decoded.
func (m *baseMap) Value() any { return m.whole.value().Value() }

// ConvertToNative converts the decoded object, as cel-go's map converts
// the decoded Go map; where it would return its own wrapper, it returns m.
func (m *baseMap) ConvertToNative(t reflect.Type) (any, error) { return m.whole.native(m, t) }

// ConvertToType is cel-go's map's, with m as the map.
func (m *baseMap) ConvertToType(t ref.Type) ref.Val {
	if t == celtypes.MapType {
		return m
	}
	return m.celMap.ConvertToType(t)
}

// Fold is cel-go's map's, handing out CEL values.
func (m *baseMap) Fold(f traits.Folder) {
	for k, v := range m.level {
		if !f.FoldEntry(k, m.adapter.NativeToValue(v)) {
			return
		}
	}
}

// Value is the array as decoded.
func (l *baseList) Value() any { return l.whole.value().Value() }

// ConvertToNative converts the decoded array, as cel-go's list converts
// the decoded Go slice; where it would return its own wrapper, it returns
// l.
func (l *baseList) ConvertToNative(t reflect.Type) (any, error) { return l.whole.native(l, t) }

// ConvertToType is cel-go's list's, with l as the list.
func (l *baseList) ConvertToType(t ref.Type) ref.Val {
	if t == celtypes.ListType {
		return l
	}
	return l.celList.ConvertToType(t)
}

// Fold is cel-go's list's, handing out CEL values.
func (l *baseList) Fold(f traits.Folder) {
	for i, v := range l.level {
		if !f.FoldEntry(i, l.adapter.NativeToValue(v)) {
			return
		}
	}
}

// String is cel-go's list's, which prints the raw elements.
func (l *baseList) String() string { return fmt.Sprint(l.whole.value()) }
