package inject

import (
	"fmt"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"

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
	if err := jsonscan.Valid(raw); err != nil {
		return nil, fmt.Errorf("cannot read pod: %w", err)
	}
	return PodFromEncodedJSON(raw)
}

// PodFromEncodedJSON is PodFromJSON for JSON already validated, such as the
// objects of admission.Decode: it skips validating the bytes a second time.
// It does not parse the Pod: it finds the lists' items and their names in
// the bytes (internal/jsonscan), and parses only the annotations; an item's
// JSON is its slice of raw.
func PodFromEncodedJSON(raw []byte) (*Pod, error) {
	if t := jsonscan.TypeOf(raw); t != fastjson.TypeObject {
		return nil, fmt.Errorf("cannot read pod: want an object, got %s", t)
	}
	top := jsonscan.OpenMembers(raw, "spec", "metadata") // spec usually last: read, not skipped
	pod := &Pod{}
	for i, f := range []struct {
		key string
		has *bool
	}{{"spec", &pod.HasSpec}, {"metadata", &pod.HasMetadata}} {
		switch t := jsonscan.TypeOf(top[i]); {
		case t == fastjson.TypeNull:
		case t != fastjson.TypeObject:
			return nil, fmt.Errorf("cannot read pod: %s must be an object, got %s", f.key, t)
		default:
			*f.has = true
		}
	}
	if err := pod.readAnnotations(jsonscan.Member(top[1], "annotations")); err != nil {
		return nil, err
	}
	fields := [...]string{"initContainers", "containers", "ephemeralContainers", "volumes", "imagePullSecrets"}
	dsts := [...]*[]Named{&pod.InitContainers, &pod.Containers, &pod.EphemeralContainers, &pod.Volumes, &pod.ImagePullSecrets}
	for n, list := range jsonscan.Members(top[0], fields[:]...) {
		t := jsonscan.TypeOf(list)
		if t == fastjson.TypeNull {
			continue
		}
		if t != fastjson.TypeArray {
			return nil, fmt.Errorf("cannot read pod: spec.%s must be a list, got %s", fields[n], t)
		}
		for i, it := range jsonscan.Elements(list) {
			if jsonscan.TypeOf(it) != fastjson.TypeObject {
				return nil, fmt.Errorf("cannot read pod: spec.%s[%d] must be an object", fields[n], i)
			}
			name := jsonscan.Member(it, "name")
			if jsonscan.TypeOf(name) != fastjson.TypeString {
				return nil, fmt.Errorf("cannot read pod: spec.%s[%d].name must be a string", fields[n], i)
			}
			*dsts[n] = append(*dsts[n], Named{Name: jsonscan.String(name), JSON: it})
		}
	}
	return pod, nil
}

// readAnnotations reads metadata.annotations, which must be strings. They
// are parsed (fastjson unescapes a long annotation, such as kubectl's
// last-applied-configuration, faster than encoding/json would).
func (pod *Pod) readAnnotations(raw []byte) error {
	if jsonscan.TypeOf(raw) == fastjson.TypeNull {
		return nil
	}
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(raw)
	if err != nil {
		return fmt.Errorf("cannot read pod: %w", err)
	}
	o, err := v.Object()
	if err != nil {
		return fmt.Errorf("cannot read pod: metadata.annotations must be an object")
	}
	pod.Annotations = make(map[string]string, o.Len())
	o.Visit(func(k []byte, val *fastjson.Value) {
		s, e := val.StringBytes()
		if e != nil && err == nil {
			err = fmt.Errorf("cannot read pod: metadata.annotations.%s must be a string", k)
		}
		pod.Annotations[string(k)] = string(s)
	})
	return err
}
