package corpus

// Kyverno's published ValidatingPolicies (kyverno-policies/, from
// github.com/kyverno/policies: the pod-security-vpol, best-practices-vpol
// and other-vpol folders, without the policies that call a Kyverno-only CEL
// library), and the `kyverno test` suites of Kyverno's own repository that
// exercise PolicyExceptions of ValidatingPolicies (kyverno/, from
// github.com/kyverno/kyverno), run through `tollgate check` as a user runs
// it, each expectation of their suites (kyverno-test.yaml) compared with
// tollgate's result.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/cli"
	"github.com/tollgate-dev/tollgate/internal/report"
)

// kyvernoTest is a cli.kyverno.io/v1alpha1 Test, the fields the corpus uses.
type kyvernoTest struct {
	Policies []string `json:"policies"`
	// Exceptions are PolicyException files, given to tollgate with the policies.
	Exceptions []string `json:"exceptions"`
	Resources  []string `json:"resources"`
	Variables  string   `json:"variables"`
	UserInfo   string   `json:"userinfo"`
	Results    []struct {
		Policy    string   `json:"policy"`
		Kind      string   `json:"kind"`
		Resources []string `json:"resources"`
		Result    string   `json:"result"`
	} `json:"results"`
}

// kyvernoValues is a cli.kyverno.io/v1alpha1 Values file: namespaces (for
// namespaceSelectors) and values per policy and resource.
type kyvernoValues struct {
	Namespaces []map[string]any `json:"namespaces"`
	Policies   []struct {
		Name      string `json:"name"`
		Resources []struct {
			Name   string            `json:"name"`
			Values map[string]string `json:"values"`
		} `json:"resources"`
	} `json:"policies"`
}

// tally counts a folder's expectations.
type tally struct{ agree, disagree int }

func TestKyvernoPolicies(t *testing.T) {
	dir := unpack(t)
	suites, err := filepath.Glob(filepath.Join(dir, "kyverno-policies", "*", "*", ".kyverno-test", "kyverno-test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(dir, "kyverno-policies", "*", "*", "*", ".kyverno-test", "kyverno-test.yaml"))
	suites = append(suites, more...)
	sort.Strings(suites)
	if len(suites) < 90 {
		t.Fatalf("want the corpus's 93 suites, found %d", len(suites))
	}
	tallies := map[string]*tally{}
	var disagreements []string
	for _, s := range suites {
		rel, _ := filepath.Rel(filepath.Join(dir, "kyverno-policies"), filepath.Dir(filepath.Dir(s)))
		folder := strings.Split(rel, string(filepath.Separator))[0]
		if tallies[folder] == nil {
			tallies[folder] = &tally{}
		}
		for _, d := range runKyvernoSuite(t, s, tallies[folder]) {
			disagreements = append(disagreements, rel+": "+d)
		}
	}
	var total tally
	folders := make([]string, 0, len(tallies))
	for f := range tallies {
		folders = append(folders, f)
	}
	sort.Strings(folders)
	for _, f := range folders {
		n := tallies[f]
		total.agree, total.disagree = total.agree+n.agree, total.disagree+n.disagree
		t.Logf("%s: %d of %d expectations agree", f, n.agree, n.agree+n.disagree)
	}
	t.Logf("all %d suites: %d of %d expectations agree", len(suites), total.agree, total.agree+total.disagree)
	for _, d := range disagreements {
		t.Log("disagrees: " + d)
	}
	// The figures of docs/policies.md; a change either way must be looked at.
	if total.agree != kyvernoAgree || total.disagree != kyvernoDisagree {
		t.Errorf("%d expectations agree, %d disagree; docs/policies.md says %d and %d", total.agree, total.disagree, kyvernoAgree, kyvernoDisagree)
	}
}

// TestKyvernoExceptionSuites runs the suites of Kyverno's repository on
// PolicyExceptions of ValidatingPolicies: every expectation agrees.
func TestKyvernoExceptionSuites(t *testing.T) {
	dir := unpack(t)
	suites, err := filepath.Glob(filepath.Join(dir, "kyverno", "test", "cli", "test-validating-policy", "*", "kyverno-test.yaml"))
	if err != nil || len(suites) == 0 {
		t.Fatalf("no suites (%v)", err)
	}
	var n tally
	for _, s := range suites {
		for _, d := range runKyvernoSuite(t, s, &n) {
			t.Errorf("%s: %s", filepath.Base(filepath.Dir(s)), d)
		}
	}
	t.Logf("%d suites: %d of %d expectations agree", len(suites), n.agree, n.agree+n.disagree)
	if n.agree == 0 {
		t.Error("no expectation checked")
	}
}

// The corpus's figures, as docs/policies.md gives them.
const (
	kyvernoAgree    = 1312
	kyvernoDisagree = 5
)

// runKyvernoSuite runs tollgate check on one suite's policies and resources
// and compares every expectation; it returns the disagreements, each with
// why.
func runKyvernoSuite(t *testing.T, file string, n *tally) []string {
	t.Helper()
	base := filepath.Dir(file)
	var kt kyvernoTest
	readYAML(t, file, &kt)
	work := t.TempDir()
	for _, p := range append(kt.Policies, kt.Exceptions...) {
		src := filepath.Join(base, p)
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, filepath.Base(src)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"check", "-c", work, "-o", "json"}
	namespaceOf := map[string]string{} // kind/name: namespace
	for _, r := range kt.Resources {
		args = append(args, "-f", filepath.Join(base, r))
		for k, ns := range namespaces(t, filepath.Join(base, r)) {
			namespaceOf[k] = ns
		}
	}
	overrides := map[string]string{} // resource: request.operation, which tollgate is not given
	if kt.Variables != "" {
		var v kyvernoValues
		readYAML(t, filepath.Join(base, kt.Variables), &v)
		if len(v.Namespaces) > 0 {
			var b bytes.Buffer
			for _, ns := range v.Namespaces {
				ns["kind"] = "Namespace" // the corpus writes "namespace"
				js, _ := json.Marshal(ns)
				b.Write(js)
				b.WriteString("\n---\n")
			}
			nsFile := filepath.Join(work, "namespaces.yaml.txt")
			if err := os.WriteFile(nsFile, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--namespaces", nsFile)
		}
		for _, p := range v.Policies {
			for _, r := range p.Resources {
				if op := r.Values["request.operation"]; op != "" {
					overrides[r.Name] = op
				}
			}
		}
	}
	if kt.UserInfo != "" {
		var u struct {
			UserInfo struct {
				Username string   `json:"username"`
				Groups   []string `json:"groups"`
			} `json:"userInfo"`
		}
		readYAML(t, filepath.Join(base, kt.UserInfo), &u)
		if u.UserInfo.Username != "" {
			args = append(args, "--user", u.UserInfo.Username)
		}
		if len(u.UserInfo.Groups) > 0 {
			args = append(args, "--groups", strings.Join(u.UserInfo.Groups, ","))
		}
	}
	var stdout, stderr bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &stdout, &stderr)
	var r report.Report
	loadErr := ""
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		loadErr = fmt.Sprintf("tollgate check exit %d: %s", code, firstLine(stderr.String()))
	}
	got := map[string]string{} // policy/kind/name: result
	for _, res := range r.Results {
		for _, o := range res.Resources {
			got[res.Policy+"/"+o.Kind+"/"+o.Name] = string(res.Result)
			ns := o.Namespace
			if ns == "" {
				ns = "default" // check's --default-namespace
			}
			got[res.Policy+"/"+o.Kind+"/"+ns+"/"+o.Name] = string(res.Result) // Kyverno's namespace/name
		}
	}
	var out []string
	for _, e := range kt.Results {
		for _, name := range e.Resources {
			key := e.Policy + "/" + e.Kind + "/" + name
			if loadErr != "" {
				n.disagree++
				out = append(out, fmt.Sprintf("%s: want %s: %s", key, e.Result, loadErr))
				continue
			}
			result, ok := got[key]
			switch {
			case !ok:
				result = "skip" // tollgate reports no result where a policy does not apply
			case result == "warn": // Kyverno's fail, whether the action is Deny, Warn or Audit
				result = "fail"
			}
			if result == e.Result {
				n.agree++
				continue
			}
			n.disagree++
			why := "tollgate says " + result
			if strings.HasPrefix(name, "kube-system/") || namespaceOf[e.Kind+"/"+name] == "kube-system" {
				why += " (tollgate never validates in kube-system, a system namespace)"
			}
			if op := overrides[name]; op != "" {
				why += fmt.Sprintf(" (the suite's values make it a %s, which this test does not give tollgate)", op)
			}
			out = append(out, fmt.Sprintf("%s: want %s, %s", key, e.Result, why))
		}
	}
	return out
}

// namespaces maps the kind/name of each object of a manifest file to its namespace.
func namespaces(t *testing.T, file string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name, Namespace string
			} `json:"metadata"`
		}
		if yaml.Unmarshal(doc, &o) == nil {
			out[o.Kind+"/"+o.Metadata.Name] = o.Metadata.Namespace
		}
	}
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
