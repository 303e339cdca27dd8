package corpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/cli"
	"github.com/tollgate-dev/tollgate/internal/suite"
)

// checkDifferences are the library's cases where tollgate check, which
// sends an object as a CREATE request to the webhook's enforcement point,
// gives other violations than gator verify, which reviews the object
// alone; each with why.
var checkDifferences = map[string]string{}

// TestGatekeeperLibraryCheck runs `tollgate check` as a user runs it on
// every case of gatekeeper-library's suites that a directory of policies
// can hold (no inventory, no expansion, not an AdmissionReview, a valid
// Constraint), with the test's template and Constraint as the policy
// directory, and wants each assertion of the case to hold for the
// results check reports: the assertion (suite.GatorAssertion, gator's
// own semantics) holds for the messages of the fail and warn results.
func TestGatekeeperLibraryCheck(t *testing.T) {
	root := filepath.Join(unpack(t), "gatekeeper-library", "library")
	suites, err := filepath.Glob(filepath.Join(root, "*", "*", "suite.yaml"))
	if err != nil || len(suites) == 0 {
		t.Fatalf("suites: %v (%d)", err, len(suites))
	}
	checked, skipped := 0, map[string]int{}
	for _, sf := range suites {
		dir := filepath.Dir(sf)
		s, err := suite.Load(sf)
		if err != nil {
			t.Fatalf("%s: %v", sf, err)
		}
		for _, test := range s.GatorTests() {
			if test.Invalid || test.Expansion != "" {
				skipped["invalid or expansion"] += len(test.Cases)
				continue
			}
			tmpl, err := os.ReadFile(filepath.Join(dir, test.Template))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(tmpl), "data.inventory") {
				skipped["referential"] += len(test.Cases)
				continue
			}
			policies := t.TempDir()
			for name, from := range map[string]string{"template.yaml": test.Template, "constraint.yaml": test.Constraint} {
				b, err := os.ReadFile(filepath.Join(dir, from))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(policies, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range test.Cases {
				obj, err := os.ReadFile(filepath.Join(dir, c.Object))
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Inventory) > 0 || strings.Contains(string(obj), "kind: AdmissionReview") {
					skipped["inventory or AdmissionReview"]++
					continue
				}
				name, _ := filepath.Rel(root, filepath.Join(dir, test.Name, c.Name))
				checked++
				t.Run(name, func(t *testing.T) {
					messages := checkMessages(t, policies, filepath.Join(dir, c.Object))
					for i, a := range c.Assertions {
						if err := a.Check(messages); err != nil {
							if why, ok := checkDifferences[name]; ok {
								t.Logf("differs (%s): assertion %d: %s", why, i, err)
								return
							}
							t.Errorf("assertion %d: %s (messages %q)", i, err, messages)
						}
					}
					if _, ok := checkDifferences[name]; ok {
						t.Errorf("listed as a difference, but every assertion holds")
					}
				})
			}
		}
	}
	t.Logf("%d cases checked; left out: %v", checked, skipped)
	if checked < 200 {
		t.Errorf("%d cases checked, want at least 200", checked)
	}
}

// checkMessages runs tollgate check on one object and returns the
// messages of its fail and warn results (a dryrun's without its prefix).
func checkMessages(t *testing.T, policies, object string) []string {
	t.Helper()
	var stdout, stderr strings.Builder
	code := cli.Main([]string{"check", "-c", policies, "-f", object, "-o", "json"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var report struct {
		Results []struct {
			Result  string `json:"result"`
			Message string `json:"message"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	var out []string
	for _, r := range report.Results {
		switch r.Result {
		case "fail", "warn":
			out = append(out, strings.TrimPrefix(r.Message, "dryrun: "))
		case "pass", "skip":
		default:
			t.Fatalf("result %s: %s", r.Result, r.Message)
		}
	}
	return out
}
