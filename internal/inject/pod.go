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
	Annotations          Annotations
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

// PodFromJSON reads a Pod from its JSON, refusing shapes the apiserver
// could not have sent (a list that is not a list of objects with a string
// name, annotations that are not strings, a name repeated in an object).
func PodFromJSON(raw []byte) (*Pod, error) {
	doc, err := jsonscan.ValidIndexed(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot read pod: %w", err)
	}
	if name, at, found := doc.RepeatedKey(); found {
		return nil, fmt.Errorf("cannot read pod: the name %q appears twice in one object (the second at byte %d)", name, at)
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
	return PodFromParts(jsonscan.Indexed{}, top[1], top[0])
}

// PodFromParts is PodFromEncodedJSON for a Pod whose metadata and spec
// have been found already (admission.Request.ObjectParts): either may run on
// past its value, to the end of the Pod. When they are slices of doc, its
// index skips what lies between the members read; the zero doc scans.
func PodFromParts(doc jsonscan.Indexed, metadata, spec []byte) (*Pod, error) {
	pod := &Pod{}
	for _, f := range []struct {
		key string
		raw []byte
		has *bool
	}{{"spec", spec, &pod.HasSpec}, {"metadata", metadata, &pod.HasMetadata}} {
		switch t := jsonscan.TypeOf(f.raw); {
		case t == fastjson.TypeNull:
		case t != fastjson.TypeObject:
			return nil, fmt.Errorf("cannot read pod: %s must be an object, got %s", f.key, t)
		default:
			*f.has = true
		}
	}
	if err := pod.readAnnotations(doc.MembersOf(metadata, "annotations")[0]); err != nil {
		return nil, err
	}
	fields := [...]string{"initContainers", "containers", "ephemeralContainers", "volumes", "imagePullSecrets"}
	dsts := [...]*[]Named{&pod.InitContainers, &pod.Containers, &pod.EphemeralContainers, &pod.Volumes, &pod.ImagePullSecrets}
	for n, list := range doc.MembersOf(spec, fields[:]...) {
		t := jsonscan.TypeOf(list)
		if t == fastjson.TypeNull {
			continue
		}
		if t != fastjson.TypeArray {
			return nil, fmt.Errorf("cannot read pod: spec.%s must be a list, got %s", fields[n], t)
		}
		for i, it := range doc.ElementsOf(list) {
			if jsonscan.TypeOf(it) != fastjson.TypeObject {
				return nil, fmt.Errorf("cannot read pod: spec.%s[%d] must be an object", fields[n], i)
			}
			name := doc.MembersOf(it, "name")[0]
			if jsonscan.TypeOf(name) != fastjson.TypeString {
				return nil, fmt.Errorf("cannot read pod: spec.%s[%d].name must be a string", fields[n], i)
			}
			*dsts[n] = append(*dsts[n], Named{Name: jsonscan.String(name), JSON: it})
		}
	}
	return pod, nil
}
