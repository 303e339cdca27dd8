package corpus

// Kyverno's own conformance tests of PolicyExceptions for ValidatingPolicies
// (kyverno/test/conformance/chainsaw/validating-policies/exceptions/, from
// github.com/kyverno/kyverno): each applies a policy and an exception to a
// cluster running Kyverno, then resources, expecting some to be denied.
// tollgate check runs the same files; what Kyverno admits it must admit,
// what Kyverno denies it must deny, in the same words where the test gives
// them, and an exception Kyverno refuses tollgate must refuse to load.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/cli"
)

// chainsawTest is a chainsaw.kyverno.io/v1alpha1 Test, the fields these use.
type chainsawTest struct {
	Spec struct {
		Steps []struct {
			Name string `json:"name"`
			Use  struct {
				With struct {
					Bindings []struct {
						Name  string `json:"name"`
						Value string `json:"value"`
					} `json:"bindings"`
				} `json:"with"`
			} `json:"use"`
			Try []struct {
				Apply  *chainsawOp `json:"apply"`
				Create *chainsawOp `json:"create"`
			} `json:"try"`
		} `json:"steps"`
	} `json:"spec"`
}

type chainsawOp struct {
	File   string `json:"file"`
	Expect []struct {
		Check map[string]any `json:"check"`
	} `json:"expect"`
}

// denial is what an operation expects: "" admitted, "*" any error, else
// the error's text.
func (o *chainsawOp) denial() string {
	for _, e := range o.Expect {
		if v, ok := e.Check["($error != null)"]; ok && v == true {
			return "*"
		}
		if v, ok := e.Check["($error)"].(string); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func TestKyvernoChainsawExceptions(t *testing.T) {
	dir := unpack(t)
	tests, err := filepath.Glob(filepath.Join(dir, "kyverno", "test", "conformance", "chainsaw", "validating-policies", "exceptions", "*", "chainsaw-test.yaml"))
	if err != nil || len(tests) != 9 {
		t.Fatalf("want the 9 tests, found %d (%v)", len(tests), err)
	}
	checked, denied := 0, 0
	for _, file := range tests {
		base := filepath.Dir(file)
		name := filepath.Base(base)
		var ct chainsawTest
		readYAML(t, file, &ct)
		work := t.TempDir()
		type apply struct {
			file, denial string
		}
		var resources []apply
		loadDenial := ""
		for _, s := range ct.Spec.Steps {
			for _, b := range s.Use.With.Bindings { // the create-policy template
				if b.Name == "file" {
					copyFile(t, filepath.Join(base, b.Value), work)
				}
			}
			for _, op := range s.Try {
				o := op.Apply
				if o == nil {
					o = op.Create
				}
				if o == nil {
					continue
				}
				if policyDocument(t, filepath.Join(base, o.File)) {
					copyFile(t, filepath.Join(base, o.File), work)
					if d := o.denial(); d != "" {
						loadDenial = d
					}
					continue
				}
				resources = append(resources, apply{o.File, o.denial()})
			}
		}
		if loadDenial != "" {
			var stdout, stderr bytes.Buffer
			code := cli.Main([]string{"lint", "-c", work}, strings.NewReader(""), &stdout, &stderr)
			if out := stdout.String() + stderr.String(); code == 0 || !strings.Contains(out, "PolicyException") {
				t.Errorf("%s: Kyverno refuses the exception; tollgate lint exit %d: %s", name, code, out)
			}
			checked++
			continue
		}
		for _, r := range resources {
			var stdout, stderr bytes.Buffer
			code := cli.Main([]string{"check", "-c", work, "-f", filepath.Join(base, r.file)}, strings.NewReader(""), &stdout, &stderr)
			checked++
			if r.denial != "" {
				denied++
			}
			switch {
			case r.denial == "" && code != 0:
				t.Errorf("%s: %s: Kyverno admits it; tollgate check exit %d:\n%s%s", name, r.file, code, stdout.String(), stderr.String())
			case r.denial != "" && code != 1:
				t.Errorf("%s: %s: Kyverno denies it; tollgate check exit %d:\n%s%s", name, r.file, code, stdout.String(), stderr.String())
			case r.denial != "*" && r.denial != "":
				_, want, _ := strings.Cut(r.denial, "denied the request: ")
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("%s: %s: tollgate does not say %q:\n%s", name, r.file, want, stdout.String())
				}
			}
		}
	}
	t.Logf("%d tests: %d expectations agree (%d denials, one refused exception)", len(tests), checked, denied)
}

// policyDocument tells whether a file holds policies.kyverno.io documents.
func policyDocument(t *testing.T, file string) bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(data, []byte("policies.kyverno.io/"))
}

func copyFile(t *testing.T, src, dir string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
