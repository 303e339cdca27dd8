package cli

import (
	"path/filepath"
	"testing"
)

// TestGatorSuiteExit: gator verify's Suites through `tollgate test`: exit 0
// when every case passes, 1 when one does not or cannot run, 2 for a Suite
// gator would refuse.
func TestGatorSuiteExit(t *testing.T) {
	dir := filepath.Join("..", "suite", "testdata", "gator")
	for _, tc := range []struct {
		suite    string
		code     int
		contains []string
	}{
		{"pass", 0, []string{"ok   " + filepath.Join(dir, "pass", "suite.yaml") + ": repos admission-review: pass", "1 suites, 7 checks, 0 failed"}},
		{"fail", 1, []string{"FAIL " + filepath.Join(dir, "fail", "suite.yaml") + ": repos wrong-count: fail", "got 3 violations but want exactly 2", "1 suites, 6 checks, 6 failed"}},
		{"expansion", 1, []string{"expanded (test): error", "ExpansionTemplates are not supported by tollgate test"}},
		{"cel", 1, []string{"cel-only (test): error", `ConstraintTemplate "k8scelonly": the template has no Rego code`}},
		{"bad-noassert", 2, []string{`cases[0] "nothing-asserted": a case needs an object and assertions`}},
	} {
		t.Run(tc.suite, func(t *testing.T) {
			runWant(t, tc.code, tc.contains, "test", filepath.Join(dir, tc.suite))
		})
	}
}
