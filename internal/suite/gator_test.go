package suite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gatorWant is one check a gator suite must give: its test, case and
// outcome, whether it failed, and words its message must hold.
type gatorWant struct {
	test, resource, got string
	failed              bool
	message             string
}

// TestRunGator: gator verify's Suites run as gator runs them (testdata/gator;
// its two templates are gatekeeper-library's, Apache 2.0, LICENSE beside
// them), each check failing when it should.
func TestRunGator(t *testing.T) {
	for _, tc := range []struct {
		suite string
		want  []gatorWant
	}{
		{"pass", []gatorWant{
			{"repos", "allowed", "pass", false, "0 violations"},
			// every violation counts, though the Constraint only warns
			{"repos", "every-violation", "pass", false, "3 violations"},
			{"repos", "message", "pass", false, ""},
			{"repos", "default-yes", "pass", false, ""},
			{"repos", "admission-review", "pass", false, "1 violations"},
			{"repos", "skipped", "skip", false, "skip: true"},
			{"skipped-test", "(test)", "skip", false, "skip: true"},
		}},
		{"fail", []gatorWant{
			{"repos", "wrong-count", "fail", true, "got 3 violations but want exactly 2"},
			{"repos", "message-not-matching", "fail", true, `got 0 violations matching "^nothing" but want at least 1`},
			{"repos", "want-none", "fail", true, "got 3 violations but want none"},
			{"repos", "second-assertion", "fail", true, `got 2 violations matching "container" but want exactly 1`},
			{"repos", "two-objects", "error", true, "defines 2 objects, want one"},
			{"repos", "review-without-request", "error", true, "the AdmissionReview has no request"},
		}},
		{"invalid", []gatorWant{
			{"schema-refuses", "(invalid constraint)", "pass", false, "schema validation failed"},
			{"schema-accepts", "(invalid constraint)", "fail", true, "it was accepted"},
			{"not-a-schema-error", "(invalid constraint)", "fail", true, `K8sCelOnly "cel-only"`},
			{"cel-only", "(invalid constraint)", "error", true, "the template has no Rego code"},
		}},
		{"inventory", []gatorWant{
			{"unique-host", "with-inventory", "pass", false, "1 violations"},
			{"unique-host", "without-inventory", "pass", false, "0 violations"},
		}},
		{"expansion", []gatorWant{
			{"expanded", "(test)", "error", true, "expansion ../expansion.yaml: ExpansionTemplates are not supported by tollgate test"},
		}},
		{"cel", []gatorWant{
			{"cel-only", "(test)", "error", true, `ConstraintTemplate "k8scelonly": the template has no Rego code`},
		}},
	} {
		t.Run(tc.suite, func(t *testing.T) {
			s, err := Load(filepath.Join("testdata", "gator", tc.suite, GatorFileName))
			if err != nil {
				t.Fatal(err)
			}
			checks, err := s.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(checks) != len(tc.want) {
				t.Fatalf("%d checks, want %d: %+v", len(checks), len(tc.want), checks)
			}
			for i, c := range checks {
				w := tc.want[i]
				got := gatorWant{c.Policy, c.Resource, string(c.Got), c.Problem != "", ""}
				if w.message != "" && !strings.Contains(c.Message, w.message) {
					t.Errorf("%s %s: message %q lacks %q", c.Policy, c.Resource, c.Message, w.message)
				}
				w.message = ""
				if got != w {
					t.Errorf("check %d = %+v (%s: %s), want %+v", i, got, c.Problem, c.Message, w)
				}
			}
		})
	}
}

// TestLoadGatorErrors: a Suite gator would refuse is refused when read,
// naming the test and case.
func TestLoadGatorErrors(t *testing.T) {
	for _, tc := range []struct {
		suite, yaml, want string
	}{
		{"count", "", `tests[0] "repos": cases[0] "maybe": assertions[0]: violations maybe: want a nonnegative integer, yes or no`},
		{"no assertions", "", `cases[0] "nothing-asserted": a case needs an object and assertions`},
		{"negative", "- name: t\n  template: t.yaml\n  constraint: c.yaml\n  cases:\n  - name: c\n    object: o.yaml\n    assertions: [{violations: -1}]\n", "violations -1: want a nonnegative integer"},
		{"regexp", "- name: t\n  template: t.yaml\n  constraint: c.yaml\n  cases:\n  - name: c\n    object: o.yaml\n    assertions: [{message: \"(\"}]\n", "assertions[0]: message: error parsing regexp"},
		{"no constraint", "- name: t\n  template: t.yaml\n", `tests[0] "t": a test needs a template and a constraint`},
		{"unknown field", "- name: t\n  template: t.yaml\n  constraint: c.yaml\n  cases:\n  - name: c\n    object: o.yaml\n    assertion: [{violations: 1}]\n", `unknown field "tests[0].cases[0].assertion"`},
		{"kind", "", `kind "Test": want Suite`},
	} {
		t.Run(tc.suite, func(t *testing.T) {
			var file string
			switch tc.suite {
			case "count":
				file = filepath.Join("testdata", "gator", "bad-count", GatorFileName)
			case "no assertions":
				file = filepath.Join("testdata", "gator", "bad-noassert", GatorFileName)
			default:
				kind := "Suite"
				if tc.suite == "kind" {
					kind = "Test"
				}
				file = writeFile(t, fmt.Sprintf("kind: %s\napiVersion: test.gatekeeper.sh/v1alpha1\ntests:\n%s", kind, tc.yaml))
			}
			if _, err := Load(file); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), GatorFileName)
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
