package cli

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckInputPaths: a path that yields no manifest fails the command
// (exit 2, naming it), so that a CI job given a wrong directory does not
// pass on a check of nothing; gzipped manifests are read.
func TestCheckInputPaths(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	if _, err := w.Write([]byte(strings.SplitN(pods, "---\n", 2)[0])); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	zipped := filepath.Join(dir, "release")
	if err := os.Mkdir(zipped, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(zipped, "install.yaml.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	runWant(t, 2, []string{"read manifests: " + empty + ": no .yaml, .yml or .json file in it"}, "check", "-f", empty)
	runWant(t, 0, []string{"Pod shop/good", "1 pass, 0 fail"}, "check", "-f", zipped)
	if code, out, errs := runStdin("", "check", "-f", "-"); code != 2 || !strings.Contains(errs, "stdin holds no object") {
		t.Errorf("empty stdin: exit %d\n%s%s", code, out, errs)
	}
}
