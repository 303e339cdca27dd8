package staticmanifests

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func TestParseLoaded(t *testing.T) {
	tests := []struct {
		file string
		want map[string]string
	}{
		{"testdata/metrics-static.txt", map[string]string{ValidatingPlugin: "sha256:2b7e", MutatingPlugin: "sha256:9f1c"}},
		{"testdata/metrics-empty-dir.txt", map[string]string{ValidatingPlugin: "sha256:2b7e"}},
		{"testdata/metrics-none.txt", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			if got := parseLoaded([]byte(mustRead(t, tt.file))); !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestHashes: the hash of a directory is the apiserver's (its loader's
// LoadFiles), which changes with the files and is absent for an empty one.
func TestHashes(t *testing.T) {
	dir := t.TempDir()
	m, v := build(t, registrationOptions())
	if _, err := Write(dir, "tollgate", m, v); err != nil {
		t.Fatal(err)
	}
	first, err := Hashes(dir)
	if err != nil || len(first) != 2 {
		t.Fatalf("%v %v", first, err)
	}
	if _, err := Write(dir, "tollgate", nil, v); err != nil {
		t.Fatal(err)
	}
	second, err := Hashes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := second[MutatingPlugin]; ok || second[ValidatingPlugin] != first[ValidatingPlugin] {
		t.Errorf("after removing the mutating file: %v (before %v)", second, first)
	}
	if err := os.WriteFile(filepath.Join(dir, ValidatingDir, "tollgate.yaml"), []byte("# edited\n"+mustRead(t, filepath.Join(dir, ValidatingDir, "tollgate.yaml"))), 0o644); err != nil {
		t.Fatal(err)
	}
	third, _ := Hashes(dir)
	if third[ValidatingPlugin] == second[ValidatingPlugin] {
		t.Error("an edited file kept its hash")
	}
}
