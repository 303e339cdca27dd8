package replay

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/golden"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// capturedLog is kube-apiserver 1.37's audit log of the e2e replay test's
// first phase (test/e2e/replay_test.go; TOLLGATE_REPLAY_TESTDATA refreshes
// it): three users' writes, patches, deletes, a dry run and execs, some
// denied by the live webhook, one Secret logged at Metadata level.
var capturedLog = filepath.Join("testdata", "audit.log")

// livePolicies are the policies that were live: tollgate's defaults and
// the e2e test's live.yaml.
func livePolicies(t testing.TB, phase string) *policy.Set {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "test", "e2e", "testdata", "replay", phase+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"defaults.yaml": policy.DefaultsYAML(), phase + ".yaml": data} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := policy.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func replayFiles(t testing.TB, cfg Config, files ...string) (*Summary, []*Decision) {
	t.Helper()
	var ds []*Decision
	cfg.Decided = func(d *Decision) { ds = append(ds, d) }
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := r.ReadFile(context.Background(), f, nil); err != nil {
			t.Fatal(err)
		}
	}
	return r.Summary(), ds
}

// TestCapturedLog: the live webhook's answers, recorded by the apiserver,
// are replay's, every one; the summary is kept as a golden file.
func TestCapturedLog(t *testing.T) {
	s, ds := replayFiles(t, Config{Set: livePolicies(t, "live"), Candidate: livePolicies(t, "candidate")}, capturedLog)
	if s.Replayed != 19 || s.Denied != 8 || s.Skipped() != 1 {
		t.Errorf("replayed %d, denied %d, set aside %d; want 19, 8, 1", s.Replayed, s.Denied, s.Skipped())
	}
	for _, d := range ds {
		_, live, webhook := strings.Cut(d.Live.Message, "denied the request: ")
		if d.Allowed == webhook {
			t.Errorf("%s %s %s: replay allowed=%v, live %d %s", d.Verb, d.Resource, d.Name, d.Allowed, d.Live.Code, d.Live.Message)
		} else if webhook && d.Message != live {
			t.Errorf("%s %s %s: replay %q, live %q", d.Verb, d.Resource, d.Name, d.Message, live)
		}
	}
	if d := s.Diff; d.NewlyDenied != 2 || d.NoLongerDenied != 1 {
		t.Errorf("candidate: %d newly denied, %d no longer; want 2 (a Service, an exec by alice) and 1 (10 replicas)", d.NewlyDenied, d.NoLongerDenied)
	}
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "summary.golden.json"), append(js, '\n'))
	var table bytes.Buffer
	if err := Table(&table, s); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "summary.golden.txt"), table.Bytes())
}

// TestFormats: the same log as JSON lines, gzipped, one EventList per
// line (the webhook backend) and one indented EventList replays the same.
func TestFormats(t *testing.T) {
	data, err := os.ReadFile(capturedLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(data)
	_ = zw.Close()
	list := func(items [][]byte, indent bool) []byte {
		b := []byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[` + string(bytes.Join(items, []byte(","))) + "]}")
		if indent {
			var out bytes.Buffer
			if err := json.Indent(&out, b, "", "  "); err != nil {
				t.Fatal(err)
			}
			return out.Bytes()
		}
		return b
	}
	perLine := append(append(list(lines[:10], false), '\n'), list(lines[10:], false)...)
	set := livePolicies(t, "live")
	want, _ := replayFiles(t, Config{Set: set}, capturedLog)
	for name, file := range map[string]string{
		"gzip":               write("audit.log.gz", gz.Bytes()),
		"EventList per line": write("lists.json", perLine),
		"an indented list":   write("list.json", list(lines, true)),
		"rotated, two files": dirOf(t, lines),
	} {
		t.Run(name, func(t *testing.T) {
			files, err := Files([]string{file})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := replayFiles(t, Config{Set: set}, files...)
			if got.Events != want.Events || got.Replayed != want.Replayed || got.Denied != want.Denied {
				t.Errorf("%d events, %d replayed, %d denied; want %d, %d, %d", got.Events, got.Replayed, got.Denied, want.Events, want.Replayed, want.Denied)
			}
		})
	}
}

// dirOf splits the log into a directory as the apiserver rotates it: the
// older half in a timestamped backup, the rest in audit.log.
func dirOf(t *testing.T, lines [][]byte) string {
	dir := t.TempDir()
	half := len(lines) / 2
	for name, part := range map[string][][]byte{"audit-2026-12-06T19-58-00.000.log": lines[:half], "audit.log": lines[half:]} {
		if err := os.WriteFile(filepath.Join(dir, name), append(bytes.Join(part, []byte("\n")), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBadInput: each bad line or unreplayable event is counted under its
// reason, named by where it is, and the run goes on to the events after.
func TestBadInput(t *testing.T) {
	data, err := os.ReadFile(capturedLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	event := func(i int, edit func(map[string]any)) []byte {
		var ev map[string]any
		if err := json.Unmarshal(lines[i], &ev); err != nil {
			t.Fatal(err)
		}
		edit(ev)
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Line 5 is alice's create of ConfigMap settings; 10, bob's update of it.
	huge := event(4, func(ev map[string]any) {
		ev["requestObject"].(map[string]any)["data"] = map[string]any{"blob": strings.Repeat("x", 10<<20)}
	})
	cases := []struct {
		name, line, reason string
		malformed          bool
	}{
		{"a truncated line", string(lines[5][:len(lines[5])/2]), "not an audit event", true},
		{"another version", string(event(5, func(ev map[string]any) { ev["apiVersion"] = "audit.k8s.io/v1beta1" })), `apiVersion "audit.k8s.io/v1beta1": want audit.k8s.io/v1`, true},
		{"another kind", string(event(5, func(ev map[string]any) { ev["kind"] = "Policy" })), `kind "Policy": want Event or EventList`, true},
		{"an update with no earlier object", string(event(9, func(ev map[string]any) {
			ev["objectRef"].(map[string]any)["name"] = "never-created"
		})), "UPDATE of an object the log does not hold before it: no oldObject", false},
		{"a delete with no earlier object", string(event(28, func(ev map[string]any) {
			ev["objectRef"].(map[string]any)["name"] = "never-created"
		})), "DELETE of an object the log does not hold before it: no oldObject", false},
		{"a deletecollection", string(event(28, func(ev map[string]any) { ev["verb"] = "deletecollection" })),
			"deletecollection: the log holds one event for all the objects deleted, and none of them", false},
		{"a request-level update", string(event(9, func(ev map[string]any) {
			ev["level"] = "Request"
			delete(ev, "requestObject")
		})), "level Request: the event holds no request object", false},
	}
	set := livePolicies(t, "live")
	want, _ := replayFiles(t, Config{Set: set}, capturedLog)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The bad line goes in after line 10, among good ones.
			log := append(append(append([][]byte{}, lines[:10]...), []byte(tc.line)), lines[10:]...)
			file := filepath.Join(t.TempDir(), "audit.log")
			if err := os.WriteFile(file, bytes.Join(log, []byte("\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			s, _ := replayFiles(t, Config{Set: set}, file)
			reasons := s.NotReplayable
			if tc.malformed {
				reasons = s.Malformed
			}
			found := false
			for _, r := range reasons {
				if strings.HasPrefix(r.Reason, tc.reason) && r.First == file+":11" {
					found = true
				}
			}
			if !found {
				t.Errorf("no %q at %s:11 among %s", tc.reason, file, show(reasons))
			}
			if s.Replayed != want.Replayed {
				t.Errorf("%d replayed, want %d: the run did not go on", s.Replayed, want.Replayed)
			}
		})
	}
	t.Run("a line over 64 MiB", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "audit.log")
		long := append(bytes.Repeat([]byte("x"), MaxLine+1), '\n')
		if err := os.WriteFile(file, append(long, data...), 0o644); err != nil {
			t.Fatal(err)
		}
		s, _ := replayFiles(t, Config{Set: set}, file)
		if len(s.Malformed) != 1 || s.Malformed[0].First != file+":1" || s.Malformed[0].Reason != "line longer than 64 MiB" || s.Replayed != want.Replayed {
			t.Errorf("malformed %s, %d replayed; want the first line, then %d replayed", show(s.Malformed), s.Replayed, want.Replayed)
		}
	})
	t.Run("a 10 MB object", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "audit.log")
		if err := os.WriteFile(file, append(append(huge, '\n'), data...), 0o644); err != nil {
			t.Fatal(err)
		}
		s, ds := replayFiles(t, Config{Set: set}, file)
		if s.Replayed != want.Replayed+1 || ds[0].Name != "settings" || !ds[0].Allowed {
			t.Errorf("%d replayed (want %d), first %+v", s.Replayed, want.Replayed+1, ds[0])
		}
	})
}

func show(rs []*Reason) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("\n" + r.First + ": " + r.Reason)
	}
	return b.String()
}

// TestUnknownNamespaces: a log that begins after its namespaces were
// created says which it does not know; given their labels, replay
// decides as with the whole log.
func TestUnknownNamespaces(t *testing.T) {
	data, err := os.ReadFile(capturedLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	file := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(file, bytes.Join(lines[4:], []byte("\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	set := livePolicies(t, "live")
	want, _ := replayFiles(t, Config{Set: set}, capturedLog)
	s, _ := replayFiles(t, Config{Set: set}, file)
	if strings.Join(s.UnknownNamespaces, ",") != "replay-1-a,replay-1-b" {
		t.Errorf("unknown namespaces %v, want replay-1-a, replay-1-b", s.UnknownNamespaces)
	}
	given := map[string]map[string]string{"replay-1-a": {"replay-e2e": "yes"}, "replay-1-b": {"replay-e2e": "yes", "sidecar-injection": "enabled"}}
	s, _ = replayFiles(t, Config{Set: set, Namespaces: given}, file)
	if len(s.UnknownNamespaces) != 0 || s.Denied != want.Denied || s.Replayed != want.Replayed {
		t.Errorf("given the namespaces: %d denied of %d, unknown %v; want %d of %d", s.Denied, s.Replayed, s.UnknownNamespaces, want.Denied, want.Replayed)
	}
}
