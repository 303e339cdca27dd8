// Package golden holds tests' expected outputs in files: Check compares
// what a test produced with its file, and `go test -update` rewrites the
// files instead. Only tests import it (it registers the -update flag), and
// every test that keeps an expected output or a generated file in the
// repository uses it.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/, policies/sets/) from what the tests produce")

// shownWhole is the size up to which a difference shows both contents
// whole; past it, the first line that differs.
const shownWhole = 8 << 10

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
		t.Errorf("differs from %s (go test -update rewrites it)\n%s", file, Difference(got, want))
	}
}

// Difference shows how got differs from want: both whole when they are
// short, else the first line that differs, numbered from 1.
func Difference(got, want []byte) string {
	if len(got)+len(want) <= shownWhole {
		return fmt.Sprintf("--- got\n%s\n--- want\n%s", got, want)
	}
	lines := func(b []byte) [][]byte { return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) }
	g, w := lines(got), lines(want)
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if i >= len(g) || i >= len(w) || !bytes.Equal(gl, wl) {
			return fmt.Sprintf("line %d (of %d got, %d want):\n--- got\n%s\n--- want\n%s", i+1, len(g), len(w), gl, wl)
		}
	}
	return "equal"
}
