package registration

import (
	"bytes"
	"fmt"
	"reflect"

	"sigs.k8s.io/yaml"
)

// YAML writes the objects as one multi-document YAML stream, skipping nils.
func YAML(objects ...any) ([]byte, error) {
	var out bytes.Buffer
	for _, o := range objects {
		if isNil(o) {
			continue
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encode manifest: %w", err)
		}
		if out.Len() > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}

// isNil is true for nil and for typed nil pointers, which Build returns for a
// configuration no group needs.
func isNil(o any) bool {
	if o == nil {
		return true
	}
	v := reflect.ValueOf(o)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
