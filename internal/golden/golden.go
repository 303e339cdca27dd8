// Package golden holds tests' expected outputs in files: Check compares
// what a test produced with its file, and `go test -update` rewrites the
// files instead. Only tests import it (it registers the -update flag).
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Check compares got with the file's content, after writing got to it
// under -update. A missing file fails, saying how to create it.
func Check(t testing.TB, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("differs from %s\n--- got\n%s\n--- want\n%s", file, got, want)
	}
}
