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
// can hold (no expansion, not an AdmissionReview, a valid Constraint),
// with the test's template and Constraint as the policy directory (and,
// for a referential template, the library's Config that syncs what it
// reads; the case's inventory as --references), and wants each assertion of the case to hold for the
// results check reports: the assertion (suite.GatorAssertion, gator's
// own semantics) holds for the messages of the fail and warn results.
func TestGatekeeperLibraryCheck(t *testing.T) {
	root := filepath.Join(unpack(t), "gatekeeper-library", "library")
	suites, err := filepath.Glob(filepath.Join(root, "*", "*", "suite.yaml"))
	if err != nil || len(suites) == 0 {
		t.Fatalf("suites: %v (%d)", err, len(suites))
	}
	checked, referential, skipped := 0, 0, map[string]int{}
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
			files := map[string]string{"template.yaml": test.Template, "constraint.yaml": test.Constraint}
			if strings.Contains(string(tmpl), "data.inventory") {
				// The library's Config for the template: what Gatekeeper must sync.
				files["sync.yaml"] = filepath.Join(filepath.Dir(test.Template), "sync.yaml")
				referential += len(test.Cases)
			}
			policies := t.TempDir()
			for name, from := range files {
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
				if strings.Contains(string(obj), "kind: AdmissionReview") {
					skipped["AdmissionReview"]++
					continue
				}
				var inventory []string
				for _, inv := range c.Inventory {
					inventory = append(inventory, filepath.Join(dir, inv))
				}
				name, _ := filepath.Rel(root, filepath.Join(dir, test.Name, c.Name))
				checked++
				t.Run(name, func(t *testing.T) {
					messages := checkMessages(t, policies, filepath.Join(dir, c.Object), inventory)
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
	t.Logf("%d cases checked, %d of referential templates; left out: %v", checked, referential, skipped)
	if checked < 240 || referential < 20 {
		t.Errorf("%d cases checked (%d referential), want at least 240 (20)", checked, referential)
	}
}

// checkMessages runs tollgate check on one object and returns the
// messages of its fail and warn results (a dryrun's without its prefix).
func checkMessages(t *testing.T, policies, object string, inventory []string) []string {
	t.Helper()
	var stdout, stderr strings.Builder
	args := []string{"check", "-c", policies, "-f", object, "-o", "json"}
	for _, inv := range inventory {
		args = append(args, "--references", inv)
	}
	code := cli.Main(args, strings.NewReader(""), &stdout, &stderr)
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
