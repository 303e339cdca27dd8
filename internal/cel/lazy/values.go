package lazy

import (
	"reflect"
	"unsafe"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// Values is the CEL adapter of one review's unstructured objects. It makes
// what types.DefaultTypeAdapter makes (the same map and list types, whose
// members are read through the adapter again), but each non-empty map and
// list of the objects once: the default adapter wraps a map again at every
// read of it, so every policy reading object.spec.containers paid for new
// wrappers of object, spec, the list and each container. It also makes the
// values of the nodes of objects read from their JSON (lazy.go).
type Values struct {
	maps  map[unsafe.Pointer]ref.Val
	lists map[listKey]ref.Val
}

type listKey struct {
	data unsafe.Pointer
	n    int
}

// NewValues is the adapter of one review.
func NewValues() *Values {
	return &Values{maps: map[unsafe.Pointer]ref.Val{}, lists: map[listKey]ref.Val{}}
}

// NativeToValue implements types.Adapter.
func (c *Values) NativeToValue(v any) ref.Val {
	switch x := v.(type) {
	case *node:
		return c.valueOf(x)
	case map[string]any:
		if len(x) > 0 {
			p := reflect.ValueOf(x).UnsafePointer()
			if val, ok := c.maps[p]; ok {
				return val
			}
			val := types.NewStringInterfaceMap(c, x)
			c.maps[p] = val
			return val
		}
	case []any:
		if len(x) > 0 {
			k := listKey{unsafe.Pointer(unsafe.SliceData(x)), len(x)}
			if val, ok := c.lists[k]; ok {
				return val
			}
			val := types.NewDynamicList(c, x)
			c.lists[k] = val
			return val
		}
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

// Object is the CEL value of the document's object, read lazily.
func (c *Values) Object(d *Document) ref.Val { return c.NativeToValue(d.root()) }
