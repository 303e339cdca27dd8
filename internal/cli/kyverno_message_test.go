package cli

import (
	"encoding/json"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/report"
)

// TestKyvernoMessages: a failing validation of a Kyverno policy is worded as
// Kyverno words it (pkg/cel/policies/vpol/compiler/policy.go), where the
// apiserver's evaluator differs: the message as written (the apiserver trims
// it); with a messageExpression its text as it is (the apiserver trims it
// and falls back to the message for a multi-line one), "failed to evaluate
// message expression: <cause>" when it fails and Kyverno's default for an
// empty text (the apiserver: the message); an error that came through a
// variable without the apiserver's "composited variable ..." words. The
// differential against Kyverno (test/e2e/kyvernodiff) found these but the
// padded text.
func TestKyvernoMessages(t *testing.T) {
	code, out, stderr := run("check", "-c", "testdata/kyverno-messages/policies.yaml", "-f", "testdata/kyverno-messages/pods.yaml", "-o", "json")
	if code != exitDenied {
		t.Fatalf("exit %d, want %d: %s", code, exitDenied, stderr)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"blank":  "Policy messages failed: ends in blanks   ",
		"broken": "Policy messages failed: failed to evaluate message expression: no such key: labels",
		"empty":  "Policy messages failed: CEL expression validation failed at index 2",
		"padded": "Policy messages failed:   two\nlines  ",
		"var":    "Policy messages error: error: no such key: labels",
		"fine":   "",
	}
	for _, res := range r.Results {
		name := res.Resources[0].Name
		w, ok := want[name]
		if !ok {
			t.Errorf("unexpected result for %s", name)
			continue
		}
		delete(want, name)
		if res.Message != w || (w == "") != (res.Result == "pass") {
			t.Errorf("%s: %s %q, want %q", name, res.Result, res.Message, w)
		}
	}
	for name := range want {
		t.Errorf("%s: no result", name)
	}
}
