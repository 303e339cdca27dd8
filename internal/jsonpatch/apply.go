package jsonpatch

import (
	"encoding/json"
	"fmt"

	jsonpatch5 "github.com/evanphx/json-patch/v5"
)

// Apply returns doc with the patch applied as the apiserver applies a
// webhook's patch (github.com/evanphx/json-patch/v5), doc itself when the
// patch is empty. doc is not modified.
func Apply(doc []byte, p Patch) ([]byte, error) {
	if len(p) == 0 {
		return doc, nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode patch: %w", err)
	}
	decoded, err := jsonpatch5.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("decode patch: %w", err)
	}
	out, err := decoded.Apply(doc)
	if err != nil {
		return nil, fmt.Errorf("the patch does not apply: %w", err)
	}
	return out, nil
}
