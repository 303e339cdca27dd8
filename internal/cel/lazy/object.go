package lazy

import (
	"fmt"

	"github.com/valyala/fastjson"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

var parsers fastjson.ParserPool

// ObjectFromJSON decodes an object for CEL as the apiserver does for
// unstructured objects: integers as int64, other numbers as float64. It is
// several times faster than encoding/json into maps, which matters when
// every review of a CEL policy needs the whole object.
func ObjectFromJSON(raw []byte) (*unstructured.Unstructured, error) {
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("cannot read object: %w", err)
	}
	if v.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("cannot read object: want an object, got %s", v.Type())
	}
	return &unstructured.Unstructured{Object: toGo(v, knownKeys()).(map[string]any)}, nil
}

// RuntimeObject is ObjectFromJSON for an optional object: no bytes give a
// nil interface, which the CEL variables read as null (oldObject on CREATE,
// object on DELETE).
func RuntimeObject(raw []byte) (runtime.Object, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	u, err := ObjectFromJSON(raw)
	if err != nil {
		return nil, err
	}
	return u, nil
}

func toGo(v *fastjson.Value, known map[string]string) any {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		m := make(map[string]any, o.Len())
		o.Visit(func(k []byte, val *fastjson.Value) { m[key(known, k)] = toGo(val, known) })
		return m
	case fastjson.TypeArray:
		items, _ := v.Array()
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = toGo(it, known)
		}
		return out
	case fastjson.TypeString:
		return string(v.GetStringBytes())
	case fastjson.TypeNumber:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case fastjson.TypeTrue:
		return true
	case fastjson.TypeFalse:
		return false
	default:
		return nil
	}
}
