package lazy

import (
	"fmt"
	"strings"

	"github.com/valyala/fastjson"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

var parsers fastjson.ParserPool

// ObjectFromJSON decodes an object for CEL as the apiserver does for
// unstructured objects: integers as int64, other numbers as float64. It is
// several times faster than encoding/json into maps, which matters when
// every review of a CEL policy needs the whole object. An object nested
// deeper than fastjson reads (MaxDepth, 300 levels) is decoded by the
// apiserver's own decoder (k8s.io/apimachinery/pkg/util/json), which reads
// 10,000 levels (Deep).
func ObjectFromJSON(raw []byte) (*unstructured.Unstructured, error) {
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(raw)
	if err != nil && tooDeep(err) {
		return decodeDeep(raw)
	}
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

// Deep is how deep an object nests that fastjson does not read: more
// levels than its MaxDepth, counted as fastjson counts them
// (jsonscan.Index.Depth: the object itself, and one more for each object,
// array or scalar inside another). Such an object is decoded by the
// apiserver's decoder (ObjectFromJSON), not read lazily (NewDocument), and
// the evaluation reads it decoded, as the apiserver's validator does.
func Deep(depth int) bool { return depth > fastjson.MaxDepth }

// tooDeep tells whether fastjson refused JSON for its depth alone (its
// one limit on valid JSON; TestDeepObjects holds this reading of its
// message to what it says).
func tooDeep(err error) bool {
	return strings.Contains(err.Error(), fmt.Sprintf("too big depth for the nested JSON; it exceeds %d", fastjson.MaxDepth))
}

// decodeDeep decodes an object as the apiserver decodes an unstructured
// object's JSON (unstructuredJSONScheme: util/json.Unmarshal into a map),
// which refuses more than 10,000 levels of nesting, as the apiserver
// refuses such an object before any policy sees it.
func decodeDeep(raw []byte) (*unstructured.Unstructured, error) {
	var m map[string]any
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("cannot read object: %w", err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
