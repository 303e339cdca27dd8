package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any file is either policies or errors, never a panic, and what
// loads forms a set.
func FuzzParse(f *testing.F) {
	f.Add(DefaultsYAML())
	files, _ := filepath.Glob("../../policies/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: v}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		_, _ = NewSet(ps)
	})
}
