package corpus

import (
	"path/filepath"
	"strings"
	"testing"
)

// gatorCannotPass are the checks of gatekeeper-library's suites that
// tollgate test cannot pass (say an expansion test: ExpansionTemplates
// are not supported), as `tollgate test` prints their FAIL line relative
// to the library, with why; none so far. An entry that starts passing
// fails the test.
var gatorCannotPass = map[string]string{}

// The corpus's figures: gatekeeper-library's suites, their tests and cases.
const (
	gatorSuites = 49
	gatorTests  = 75
	gatorCases  = 270
)

// TestGatorSuites runs every gator verify Suite of gatekeeper-library
// through `tollgate test`, as a user runs it on the library, with
// Gatekeeper's evaluator: every case passes, each counted.
func TestGatorSuites(t *testing.T) {
	dir := filepath.Join(unpack(t), "gatekeeper-library", "library")
	suites, err := filepath.Glob(filepath.Join(dir, "*", "*", "suite.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests, cases, checks := 0, 0, 0
	for _, file := range suites {
		var s struct {
			Tests []struct {
				Invalid   bool   `json:"invalid"`
				Expansion string `json:"expansion"`
				Cases     []any  `json:"cases"`
			} `json:"tests"`
		}
		readYAML(t, file, &s)
		for _, test := range s.Tests {
			tests++
			cases += len(test.Cases)
			// One check a case; one for a test that is invalid, has no
			// cases, or cannot run.
			if test.Invalid || test.Expansion != "" || len(test.Cases) == 0 {
				checks++
			} else {
				checks += len(test.Cases)
			}
		}
	}
	if len(suites) != gatorSuites || tests != gatorTests || cases != gatorCases {
		t.Errorf("the library has %d suites, %d tests, %d cases; want %d, %d, %d", len(suites), tests, cases, gatorSuites, gatorTests, gatorCases)
	}

	n := runTest(t, dir)
	t.Logf("%d suites: %d of %d checks pass", n.suites, n.checks-n.failed, n.checks)
	if n.suites != len(suites) || n.checks != checks {
		t.Errorf("tollgate test ran %d suites, %d checks; the library has %d suites, %d checks", n.suites, n.checks, len(suites), checks)
	}
	failing := map[string]bool{}
	for _, f := range n.failures {
		line, why, _ := strings.Cut(f, "\n")
		failing[line] = true
		if reason, ok := gatorCannotPass[line]; ok {
			t.Logf("cannot pass (%s): %s\n%s", reason, line, why)
			continue
		}
		t.Errorf("fails: %s\n%s", line, why)
	}
	for line, reason := range gatorCannotPass {
		if !failing[line] {
			t.Errorf("listed as unable to pass (%s) but passes: %s", reason, line)
		}
	}
}
