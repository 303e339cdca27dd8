package corpus

// Kyverno's published ValidatingPolicies (kyverno-policies/, from
// github.com/kyverno/policies: the pod-security-vpol, best-practices-vpol
// and other-vpol folders, without the policies that call a Kyverno-only CEL
// library tollgate does not have: all but resource.Get and resource.List),
// and the `kyverno test` suites of Kyverno's own repository that
// exercise PolicyExceptions of ValidatingPolicies (kyverno/, from
// github.com/kyverno/kyverno), run through `tollgate test` as a user runs
// it: their suites (kyverno-test.yaml) as they are.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/cli"
)

// tally counts a run's expectations.
type tally struct {
	suites, checks, failed int
	// failures are the FAIL lines, each with the line that says why.
	failures []string
}

// runTest runs `tollgate test dir` and reads its output.
func runTest(t *testing.T, dir string) tally {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"test", dir}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 && code != 1 {
		t.Fatalf("tollgate test %s: exit %d: %s", dir, code, stderr.String())
	}
	var n tally
	lines := strings.Split(stdout.String(), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "FAIL ") && i+1 < len(lines) {
			rel, _ := filepath.Rel(dir, strings.TrimPrefix(l, "FAIL "))
			n.failures = append(n.failures, rel+"\n"+lines[i+1])
		}
	}
	last := lines[len(lines)-2]
	if _, err := fmt.Sscanf(last, "%d suites, %d checks, %d failed", &n.suites, &n.checks, &n.failed); err != nil {
		t.Fatalf("tollgate test %s: summary %q: %v", dir, last, err)
	}
	if (code == 1) != (n.failed > 0) || len(n.failures) != n.failed {
		t.Fatalf("tollgate test %s: exit %d, %d failed, %d FAIL lines", dir, code, n.failed, len(n.failures))
	}
	return n
}

func TestKyvernoPolicies(t *testing.T) {
	dir := unpack(t)
	var total tally
	for _, folder := range []string{"best-practices-vpol", "other-vpol", "pod-security-vpol"} {
		n := runTest(t, filepath.Join(dir, "kyverno-policies", folder))
		t.Logf("%s: %d suites, %d of %d expectations pass", folder, n.suites, n.checks-n.failed, n.checks)
		total.suites, total.checks, total.failed = total.suites+n.suites, total.checks+n.checks, total.failed+n.failed
		total.failures = append(total.failures, n.failures...)
	}
	t.Logf("all %d suites: %d of %d expectations pass", total.suites, total.checks-total.failed, total.checks)
	for _, f := range total.failures {
		t.Log("fails: " + f)
	}
	if total.suites != 95 {
		t.Errorf("%d suites, want the corpus's 95", total.suites)
	}
	// The figures of docs/kyverno-tests.md; a change either way must be looked at.
	if total.checks-total.failed != kyvernoPass || total.failed != kyvernoFail {
		t.Errorf("%d expectations pass, %d fail; docs/kyverno-tests.md says %d and %d", total.checks-total.failed, total.failed, kyvernoPass, kyvernoFail)
	}
}

// TestKyvernoExceptionSuites runs the suites of Kyverno's repository on
// PolicyExceptions of ValidatingPolicies: every expectation passes.
func TestKyvernoExceptionSuites(t *testing.T) {
	dir := unpack(t)
	n := runTest(t, filepath.Join(dir, "kyverno", "test", "cli", "test-validating-policy"))
	t.Logf("%d suites: %d of %d expectations pass", n.suites, n.checks-n.failed, n.checks)
	for _, f := range n.failures {
		t.Error("fails: " + f)
	}
	if n.checks == 0 {
		t.Error("no expectation checked")
	}
}

// The corpus's figures, as docs/kyverno-tests.md gives them.
const (
	kyvernoPass = 1340
	kyvernoFail = 5
)

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
