package corpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/cli"
)

// checkSuite is what TestGatekeeperLibraryCheck reads of a gator Suite.
type checkSuite struct {
	Tests []struct {
		Name       string `json:"name"`
		Template   string `json:"template"`
		Constraint string `json:"constraint"`
		Invalid    bool   `json:"invalid"`
		Expansion  string `json:"expansion"`
		Cases      []struct {
			Name       string   `json:"name"`
			Object     string   `json:"object"`
			Inventory  []string `json:"inventory"`
			Assertions []struct {
				Violations any     `json:"violations"`
				Message    *string `json:"message"`
			} `json:"assertions"`
		} `json:"cases"`
	} `json:"tests"`
}

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
// results check reports: as many fail and warn results, whose messages
// match the assertion's, as gator counts violations.
func TestGatekeeperLibraryCheck(t *testing.T) {
	root := filepath.Join(unpack(t), "gatekeeper-library", "library")
	suites, err := filepath.Glob(filepath.Join(root, "*", "*", "suite.yaml"))
	if err != nil || len(suites) == 0 {
		t.Fatalf("suites: %v (%d)", err, len(suites))
	}
	checked, skipped := 0, map[string]int{}
	for _, sf := range suites {
		dir := filepath.Dir(sf)
		data, err := os.ReadFile(sf)
		if err != nil {
			t.Fatal(err)
		}
		var s checkSuite
		if err := yaml.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", sf, err)
		}
		for _, test := range s.Tests {
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
						if err := gatorAssertion(a.Violations, a.Message, messages); err != "" {
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

// gatorAssertion is gator's assertion (pkg/gator/verify/assertion.go):
// the violations whose message matches the regular expression (all, when
// there is none) number exactly an integer, or at least one for yes (the
// default), none for no. It returns what does not hold, "" when it holds.
func gatorAssertion(violations any, message *string, messages []string) string {
	re := regexp.MustCompile("")
	if message != nil {
		re = regexp.MustCompile(*message)
	}
	n := 0
	for _, m := range messages {
		if re.MatchString(m) {
			n++
		}
	}
	switch v := violations.(type) {
	case nil:
		if n == 0 {
			return "want a violation, have none"
		}
	case bool: // YAML 1.1 reads yes and no so
		if v != (n > 0) {
			return "want violations " + map[bool]string{true: "yes", false: "no"}[v] + ", have " + itoa(n)
		}
	case string:
		if (v == "yes") != (n > 0) {
			return "want violations " + v + ", have " + itoa(n)
		}
	case float64:
		if int(v) != n {
			return "want " + itoa(int(v)) + " violations, have " + itoa(n)
		}
	}
	return ""
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
