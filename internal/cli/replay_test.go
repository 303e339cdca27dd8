package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// replayLog is kube-apiserver 1.37's audit log of the e2e replay test.
var replayLog = filepath.Join("..", "replay", "testdata", "audit.log")

// replayPolicies is a directory of what was live when the log was written:
// the embedded defaults and the e2e test's policies of the phase.
func replayPolicies(t *testing.T, phase string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), phase)
	data, err := os.ReadFile(filepath.Join("..", "..", "test", "e2e", "testdata", "replay", phase+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"defaults.yaml": policy.DefaultsYAML(), phase + ".yaml": data} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReplay(t *testing.T) {
	live, candidate := replayPolicies(t, "live"), replayPolicies(t, "candidate")
	empty := t.TempDir()
	blank := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(blank, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		code     int
		contains []string
		args     []string
	}{
		{"the table", 3, []string{"25 admission requests (writes and connects), 19 replayed", "8 denied", "level Metadata: the event holds no object",
			"replay-no-exec        deny    create pods/exec replay-1-b/app"}, []string{"-c", live, "-f", replayLog}},
		{"a candidate", 3, []string{"2 newly denied, 1 no longer denied", "replay-max-replicas   1 -> 0"}, []string{"-c", live, "--diff-config", candidate, "-f", replayLog}},
		{"no log", 2, []string{"give the audit log with -f"}, []string{"-c", live}},
		{"an empty directory", 2, []string{empty + ": no file in it"}, []string{"-c", live, "-f", empty}},
		{"an empty file", 2, []string{blank + ": no audit event in it"}, []string{"-c", live, "-f", blank}},
		{"a wrong output", 2, []string{`--output "yaml": want table, json or report`}, []string{"-c", live, "-f", replayLog, "-o", "yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runWant(t, tc.code, tc.contains, append([]string{"replay"}, tc.args...)...) })
	}

	t.Run("json from stdin", func(t *testing.T) {
		data, err := os.ReadFile(replayLog)
		if err != nil {
			t.Fatal(err)
		}
		code, out, errs := runStdin(string(data), "replay", "-c", live, "-f", "-", "-o", "json")
		var s struct{ Replayed, Denied int }
		if err := json.Unmarshal([]byte(out), &s); code != 3 || err != nil || s.Replayed != 19 || s.Denied != 8 {
			t.Errorf("exit %d, %+v, %v; want 3, 19 replayed, 8 denied\n%s%s", code, s, err, out, errs)
		}
	})
	t.Run("a report and the events", func(t *testing.T) {
		events := filepath.Join(t.TempDir(), "events.jsonl")
		code, out, errs := run("replay", "-c", live, "-f", replayLog, "-o", "report", "--events", events)
		if code != 3 || !strings.Contains(out, `"kind": "Report"`) || !strings.Contains(out, `"policy": "replay-require-team"`) {
			t.Errorf("exit %d, want 3 and a Report:\n%s%s", code, out, errs)
		}
		data, err := os.ReadFile(events)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n != 19 {
			t.Errorf("%d events written, want 19", n)
		}
	})
}
