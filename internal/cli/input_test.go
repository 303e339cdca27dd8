package cli

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckInputPaths: a path that yields no manifest fails the command
// (exit 2, naming it), so that a CI job given a wrong directory does not
// pass on a check of nothing; gzipped manifests are read.
func TestCheckInputPaths(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	zipped := filepath.Join(dir, "release")
	if err := os.Mkdir(zipped, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(zipped, "install.yaml.gz"), gzipped(t, []byte(strings.SplitN(pods, "---\n", 2)[0])), 0o644); err != nil {
		t.Fatal(err)
	}
	runWant(t, 2, []string{"read manifests: " + empty + ": no .yaml, .yml or .json file in it"}, "check", "-f", empty)
	runWant(t, 0, []string{"Pod shop/good", "1 pass, 0 fail"}, "check", "-f", zipped)
	if code, out, errs := runStdin("", "check", "-f", "-"); code != 2 || !strings.Contains(errs, "stdin holds no object") {
		t.Errorf("empty stdin: exit %d\n%s%s", code, out, errs)
	}
}

// TestInputPathsEveryCommand: every command that reads files refuses a
// path that yields nothing (exit 2, naming it) and reads gzipped files.
func TestInputPathsEveryCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(name string) []byte {
		t.Helper()
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	comments := write("comments/policies.yaml", []byte("# policies go here\n---\n"))
	onlyParams := write("params/configmap.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p, namespace: d}\n"))
	policies := write("zipped/policies.yaml.gz", gzipped(t, read(applies("policies.yaml"))))
	review := write("review.json.gz", gzipped(t, read(applies("review-team-a-plain.json"))))
	blank := write("blank.json", []byte(" \n"))
	notGzip := write("bad.yaml.gz", []byte("plain text"))
	emptyLog := write("audit/audit.log", nil)

	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"lint empty directory", []string{"lint", "-c", empty}, 2, []string{empty + ": no policies found: no .yaml, .yml or .json file in it"}},
		{"lint comments only", []string{"lint", "-c", filepath.Dir(comments)}, 2, []string{filepath.Dir(comments) + ": no policies found: no document in it is a policy"}},
		{"lint only params", []string{"lint", "-c", onlyParams}, 2, []string{onlyParams + ": no policies found"}},
		{"lint missing path", []string{"lint", "-c", filepath.Join(dir, "nope")}, 2, []string{"no such file or directory"}},
		{"lint not gzip", []string{"lint", "-c", notGzip}, 2, []string{notGzip + ": read as gzip"}},
		{"lint gzipped directory", []string{"lint", "-c", filepath.Dir(policies)}, 0, []string{"no problems"}},
		{"check empty policies", []string{"check", "-c", empty, "-f", applies("namespaces.yaml")}, 2, []string{"load policies: " + empty + ": no policies found"}},
		{"review blank", []string{"review", "-c", policies, "-f", blank, "--path", "/validate/vap/vap-team-a"}, 2, []string{blank + ": empty: no AdmissionReview in it"}},
		{"review blank stdin", []string{"review", "-c", policies, "-f", "-", "--path", "/validate/vap/vap-team-a"}, 2, []string{"stdin: empty"}},
		{"review gzipped", []string{"review", "-c", policies, "-f", review, "--path", "/validate/vap/vap-team-a"}, 1, []string{`"allowed":false`}},
		{"review not gzip", []string{"review", "-f", notGzip}, 2, []string{notGzip + ": read as gzip"}},
		{"test empty directory", []string{"test", empty}, 2, []string{"under " + empty}},
		{"replay empty directory", []string{"replay", "-f", empty}, 2, []string{empty + ": no file in it"}},
		{"replay empty log", []string{"replay", "-f", emptyLog}, 2, []string{emptyLog + ": no audit event in it"}},
		{"replay one of two paths empty", []string{"replay", "-f", replayLog, "-f", filepath.Dir(emptyLog)}, 2, []string{filepath.Dir(emptyLog) + ": no audit event in it"}},
	} {
		t.Run(tc.name, func(t *testing.T) { runWant(t, tc.code, tc.contains, tc.args...) })
	}
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
