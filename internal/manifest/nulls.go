package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// dropNullMembers removes the members whose value is null, at any depth, as
// the apiserver does for the built-in kinds: it decodes an object into Go
// structs, where a null leaves the field unset, and encodes it without
// that field before admission sees it. YAML such as "annotations:" with
// nothing after it is null, common in templated manifests, and must be
// decided as the apiserver would see it. Elements of lists stay as they are.
func dropNullMembers(js []byte) ([]byte, error) {
	if !bytes.Contains(js, []byte("null")) {
		return js, nil
	}
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	if !prune(v) {
		return js, nil
	}
	return json.Marshal(v)
}

// prune drops null members of the objects in v and tells whether it did.
func prune(v any) bool {
	changed := false
	switch t := v.(type) {
	case map[string]any:
		for k, m := range t {
			if m == nil {
				delete(t, k)
				changed = true
				continue
			}
			changed = prune(m) || changed
		}
	case []any:
		for _, e := range t {
			changed = prune(e) || changed
		}
	}
	return changed
}
