package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
)

// TestGatekeeperConfigCheck: tollgate check, which sends each object as
// the webhook is sent it, leaves alone the namespaces a Gatekeeper Config
// excludes from the webhook: only the Pod in shop fails.
func TestGatekeeperConfigCheck(t *testing.T) {
	dir := filepath.Join("testdata", "gatekeeper-config")
	code, out, errs := run("check", "-c", filepath.Join(dir, "policies"), "-f", filepath.Join(dir, "pods.yaml"), "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	var report struct {
		Results []struct {
			Policy, Result, Message string
			Resources               []struct{ Namespace, Name string }
		}
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got []string
	for _, r := range report.Results {
		for _, o := range r.Resources {
			got = append(got, o.Namespace+"/"+o.Name+" "+r.Policy+" "+r.Result+": "+r.Message)
		}
	}
	want := []string{`shop/app testrequiredlabels/owner fail: missing labels: {"owner"}`}
	if !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
}
