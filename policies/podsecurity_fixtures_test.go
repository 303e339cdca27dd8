package policies_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/pod-security-admission/api"
	psa "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/cli"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/report"
)

// TestPodSecurityFixturesCheck runs `tollgate check` with each Pod Security
// set, as a user would, on Kubernetes' own fixtures of the newest policy
// version as they are written (volumes without a source, no imagePullPolicy
// ...), and requires each verdict to equal both what the fixture's
// directory says (pass/ or fail/) and k8s.io/pod-security-admission's
// evaluator on the Pod the apiserver would default it to.
func TestPodSecurityFixturesCheck(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/pod-security-admission").Output()
	if err != nil {
		t.Fatalf("locate k8s.io/pod-security-admission: %v", err)
	}
	eval, err := psa.NewEvaluator(psa.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range []api.Level{api.LevelBaseline, api.LevelRestricted} {
		t.Run(string(level), func(t *testing.T) {
			root, version := newestFixtures(t, filepath.Join(strings.TrimSpace(string(out)), "test", "testdata", string(level)))
			dir := t.TempDir()
			want := map[string]bool{} // by the name given in dir
			for _, verdict := range []string{"pass", "fail"} {
				files, err := filepath.Glob(filepath.Join(root, verdict, "*.yaml"))
				if err != nil || len(files) == 0 {
					t.Fatalf("no fixtures in %s: %v", filepath.Join(root, verdict), err)
				}
				for _, f := range files {
					p := readPod(t, f, f)
					lv := api.LevelVersion{Level: level, Version: version}
					allowed := psa.AggregateCheckResults(eval.EvaluatePod(lv, &p.obj.ObjectMeta, &p.obj.Spec)).Allowed
					if allowed != (verdict == "pass") {
						t.Fatalf("%s: Pod Security allows=%v the defaulted Pod of a %s fixture", f, allowed, verdict)
					}
					// The same name is in pass/ and fail/: each is renamed for one run.
					name := verdict + "-" + p.obj.Name
					want[name] = allowed
					writeRenamed(t, filepath.Join(dir, name+".yaml"), p.json, name)
				}
			}
			var stdout, stderr bytes.Buffer
			set := filepath.Join("sets", "pod-security-"+string(level)+".yaml")
			code := cli.Main([]string{"check", "-c", set, "-f", dir, "-o", "json"}, nil, &stdout, &stderr)
			if code != 1 {
				t.Fatalf("exit %d, want 1 (some fixtures denied)\n%s", code, stderr.String())
			}
			var r report.Report
			if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
				t.Fatalf("%v\n%s", err, stdout.String())
			}
			denied := map[string][]string{}
			seen := map[string]bool{}
			for _, res := range r.Results {
				for _, o := range res.Resources {
					seen[o.Name] = true
					switch res.Result {
					case engine.Fail:
						denied[o.Name] = append(denied[o.Name], res.Policy+": "+res.Message)
					case engine.Error:
						t.Errorf("%s: %s could not decide: %s", o.Name, res.Policy, res.Message)
					}
				}
			}
			for name, allowed := range want {
				if !seen[name] {
					t.Errorf("%s: no result", name)
				} else if (len(denied[name]) == 0) != allowed {
					t.Errorf("%s: Pod Security allowed=%v, tollgate check allowed=%v %q", name, allowed, len(denied[name]) == 0, denied[name])
				}
			}
			if level == api.LevelRestricted && !want["pass-restrictedvolumes0"] {
				t.Error("pass-restrictedvolumes0 (a volume without a source) is not among the allowed fixtures")
			}
			t.Logf("%d fixtures of %s at %s compared", len(want), level, version)
		})
	}
}

// newestFixtures is the directory of the newest policy version under dir
// (v1.0 ... v1.N), and that version.
func newestFixtures(t *testing.T, dir string) (string, api.Version) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var newest api.Version
	found := false
	for _, e := range entries {
		v, err := api.ParseVersion(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		if !found || newest.Older(v) {
			newest, found = v, true
		}
	}
	if !found {
		t.Fatalf("no fixture versions in %s", dir)
	}
	return filepath.Join(dir, newest.String()), newest
}

// writeRenamed writes the fixture js with metadata.name set to name.
func writeRenamed(t *testing.T, file string, js []byte, name string) {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil {
		t.Fatal(err)
	}
	obj["metadata"].(map[string]any)["name"] = name
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
