package inject

import (
	"fmt"

	"github.com/tollgate-dev/tollgate/internal/admission"

	"github.com/valyala/fastjson"
)

// Pod is what injection reads of a Pod: its annotations and, for each list
// it adds to, the names of the items there and their JSON (compared only
// when a policy's item has the same name). Reading only this keeps the
// mutating path from decoding whole Pods into Go types.
type Pod struct {
	// HasSpec and HasMetadata are false when the object lacks them (or has
	// null): a patch must create them before adding below them.
	HasSpec, HasMetadata bool
	Annotations          map[string]string
	InitContainers       []Named
	Containers           []Named
	EphemeralContainers  []Named
	Volumes              []Named
	ImagePullSecrets     []Named
}

// Named is one item of a Pod list.
type Named struct {
	Name string
	JSON []byte
}

var parsers fastjson.ParserPool

// PodFromJSON reads a Pod from its JSON, refusing shapes the apiserver
// could not have sent (a list that is not a list of objects with a string
// name, annotations that are not strings).
func PodFromJSON(raw []byte) (*Pod, error) {
	if err := admission.ValidJSON(raw); err != nil {
		return nil, fmt.Errorf("cannot read pod: %w", err)
	}
	return PodFromEncodedJSON(raw)
}

// PodFromEncodedJSON is PodFromJSON for JSON an encoder wrote, such as the
// objects of admission.Decode (which validated the whole review): it skips
// validating the bytes a second time.
func PodFromEncodedJSON(raw []byte) (*Pod, error) {
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("cannot read pod: %w", err)
	}
	if v.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("cannot read pod: want an object, got %s", v.Type())
	}
	pod := &Pod{}
	for _, f := range []struct {
		key string
		has *bool
	}{{"spec", &pod.HasSpec}, {"metadata", &pod.HasMetadata}} {
		switch x := v.Get(f.key); {
		case x == nil || x.Type() == fastjson.TypeNull:
		case x.Type() != fastjson.TypeObject:
			return nil, fmt.Errorf("cannot read pod: %s must be an object, got %s", f.key, x.Type())
		default:
			*f.has = true
		}
	}
	if a := v.Get("metadata", "annotations"); a != nil && a.Type() != fastjson.TypeNull {
		o, err := a.Object()
		if err != nil {
			return nil, fmt.Errorf("cannot read pod: metadata.annotations must be an object")
		}
		pod.Annotations = make(map[string]string, o.Len())
		o.Visit(func(k []byte, val *fastjson.Value) {
			s, e := val.StringBytes()
			if e != nil && err == nil {
				err = fmt.Errorf("cannot read pod: metadata.annotations.%s must be a string", k)
			}
			pod.Annotations[string(k)] = string(s)
		})
		if err != nil {
			return nil, err
		}
	}
	for _, l := range []struct {
		field string
		dst   *[]Named
	}{
		{"initContainers", &pod.InitContainers}, {"containers", &pod.Containers}, {"ephemeralContainers", &pod.EphemeralContainers},
		{"volumes", &pod.Volumes}, {"imagePullSecrets", &pod.ImagePullSecrets},
	} {
		list := v.Get("spec", l.field)
		if list == nil || list.Type() == fastjson.TypeNull {
			continue
		}
		items, err := list.Array()
		if err != nil {
			return nil, fmt.Errorf("cannot read pod: spec.%s must be a list, got %s", l.field, list.Type())
		}
		for i, it := range items {
			if it.Type() != fastjson.TypeObject {
				return nil, fmt.Errorf("cannot read pod: spec.%s[%d] must be an object", l.field, i)
			}
			name := it.Get("name")
			if name == nil || name.Type() != fastjson.TypeString {
				return nil, fmt.Errorf("cannot read pod: spec.%s[%d].name must be a string", l.field, i)
			}
			*l.dst = append(*l.dst, Named{Name: string(name.GetStringBytes()), JSON: it.MarshalTo(nil)})
		}
	}
	return pod, nil
}
