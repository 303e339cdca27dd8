package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/suite"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const pods = `apiVersion: v1
kind: Pod
metadata: {name: good, namespace: shop, labels: {environment: dev}}
spec: {containers: [{name: app, image: app:1}]}
---
apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: shop, labels: {environment: qa}}
spec: {containers: [{name: app, image: app:1}]}
`

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "good.yaml", strings.SplitN(pods, "---\n", 2)[0])
	both := write(t, dir, "both.yaml", pods)
	nsFile := write(t, dir, "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {sidecar-injection: enabled}}\n")
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
		absent   []string
	}{
		{"allowed", []string{"check", "-f", good}, 0, []string{"Pod shop/good", "require-environment", "pass", "1 pass, 0 fail"}, nil},
		{"denied", []string{"check", "-f", both}, 1, []string{`label "environment" must be one of [dev, prod], got "qa"`, "1 fail"}, nil},
		{"namespace labels select injection", []string{"check", "-f", good, "--namespace-labels", "shop=sidecar-injection=enabled"}, 0,
			[]string{"nginx-sidecar", "adds container sidecar-nginx, volume nginx-conf"}, nil},
		{"namespace file", []string{"check", "-f", good, "--namespaces", nsFile, "--show-patches"}, 0,
			[]string{"+  - image: nginx:1.12.2", "+    tollgate.dev/status: nginx-sidecar", "--- " + good + ":1 Pod shop/good"}, nil},
		{"not selected without labels", []string{"check", "-f", good}, 0, nil, []string{"sidecar-nginx"}},
		{"skipped rows on request", []string{"check", "-f", good, "--show-skipped"}, 0, []string{"namespace shop is not selected"}, nil},
		{"stdin", []string{"check", "-f", "-"}, 1, []string{"Pod shop/bad"}, nil},
		{"delete is not checked", []string{"check", "-f", both, "--operation", "delete"}, 0, []string{"0 fail"}, nil},
		{"update needs old", []string{"check", "-f", good, "--operation", "UPDATE"}, 2, []string{"no previous version"}, nil},
		{"update with old", []string{"check", "-f", good, "--operation", "UPDATE", "--old", good}, 0, []string{"1 pass"}, nil},
		{"bad operation", []string{"check", "-f", good, "--operation", "PATCH"}, 2, nil, nil},
		{"bad output", []string{"check", "-f", good, "-o", "xml"}, 2, nil, nil},
		{"bad reports API", []string{"check", "-f", good, "-o", "json", "--reports-api", "kyverno"}, 2, []string{`--reports-api: unknown reports API "kyverno"`}, nil},
		{"no manifests", []string{"check"}, 2, nil, nil},
		{"unknown flag", []string{"check", "--nope"}, 2, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var code int
			var out, errs string
			if tt.name == "stdin" {
				code, out, errs = runStdin(pods, tt.args...)
			} else {
				code, out, errs = run(tt.args...)
			}
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			for _, c := range tt.contains {
				if !strings.Contains(out+errs, c) {
					t.Errorf("output lacks %q:\n%s%s", c, out, errs)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(out, a) {
					t.Errorf("output has %q:\n%s", a, out)
				}
			}
			if strings.Contains(out, "\x1b[") {
				t.Error("colour written to something that is not a terminal")
			}
		})
	}
}

// TestCheckPolicyReport: -o json and -o yaml write the report in the
// background audit's format, openreports by default and wgpolicyk8s with
// --reports-api, with the same summary and results either way.
func TestCheckPolicyReport(t *testing.T) {
	dir := t.TempDir()
	both := write(t, dir, "both.yaml", pods+"---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
	if code, out, errs := run("check", "-f", both); code != 1 || !strings.Contains(out, "1 pass, 1 fail, 0 warn, 0 error") || !strings.Contains(errs, "example.com/v1 Widget") {
		t.Errorf("exit %d, want 1 for a custom kind no policy matches, its guess said\n%s%s", code, out, errs)
	}
	for _, tc := range []struct {
		name             string
		flags            []string
		apiVersion, kind string
		source           string
	}{
		{"json, default", []string{"-o", "json"}, "openreports.io/v1alpha1", "Report", "tollgate"},
		{"yaml, default", []string{"-o", "yaml"}, "openreports.io/v1alpha1", "Report", "tollgate"},
		{"json, openreports", []string{"-o", "json", "--reports-api", "openreports"}, "openreports.io/v1alpha1", "Report", "tollgate"},
		{"json, wgpolicyk8s", []string{"-o", "json", "--reports-api", "wgpolicyk8s"}, "wgpolicyk8s.io/v1alpha2", "PolicyReport", ""},
		{"yaml, wgpolicyk8s", []string{"-o", "yaml", "--reports-api=wgpolicyk8s"}, "wgpolicyk8s.io/v1alpha2", "PolicyReport", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, _ := run(append([]string{"check", "-f", both, "--strict-kinds"}, tc.flags...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2 for an unknown kind with --strict-kinds", code)
			}
			js, err := yaml.YAMLToJSON([]byte(out))
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var r struct {
				APIVersion string
				Kind       string
				Source     string
				Summary    map[string]int
				Results    []struct {
					Policy, Result, Message string
					Resources               []map[string]string
				}
			}
			if err := json.Unmarshal(js, &r); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if r.APIVersion != tc.apiVersion || r.Kind != tc.kind || r.Source != tc.source {
				t.Errorf("report is %s %s, source %q; want %s %s, source %q", r.APIVersion, r.Kind, r.Source, tc.apiVersion, tc.kind, tc.source)
			}
			if r.Summary["pass"] != 1 || r.Summary["fail"] != 1 || r.Summary["error"] != 1 {
				t.Errorf("summary %v", r.Summary)
			}
			var sawUnknown bool
			for _, res := range r.Results {
				if res.Result == "error" && strings.Contains(res.Message, "unknown kind example.com/v1 Widget") && res.Resources[0]["name"] == "w" {
					sawUnknown = true
				}
			}
			if !sawUnknown {
				t.Errorf("the unknown kind is not reported: %s", out)
			}
		})
	}
}

func TestCheckReportsInvalidYAMLWithLine(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.yaml", pods+"---\napiVersion: v1\nkind: Pod\nmetadata:\n  labels: [\n")
	code, _, errs := run("check", "-f", bad)
	if code != 2 || !strings.Contains(errs, bad+":14: invalid YAML") {
		t.Errorf("exit %d, stderr %q; want file:line of the broken document", code, errs)
	}
}

func TestLint(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", "apiVersion: tollgate.dev/v1alpha1\nkind: Policy\nmetadata: {name: a}\nspec:\n  match: {resources: [pods], operations: [PATCH]}\n  inject: {containers: [{name: c}]}\n")
	write(t, dir, "b.yaml", "apiVersion: tollgate.dev/v1alpha1\nkind: Policy\nmetadata: {name: b}\nspec:\n  match: {resources: [pods]}\n  inject: {containers: [{name: c, image: i}]}\n---\napiVersion: tollgate.dev/v1alpha1\nkind: Policy\nmetadata: {name: c}\nspec:\n  match: {resources: [pods]}\n  inject: {containers: [{name: c, image: i}]}\n")
	code, out, _ := run("lint", "-c", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{
		`a.yaml: document 1: policy "a": spec.match.operations[0]: Unsupported value: "PATCH"`,
		`a.yaml: document 1: policy "a": spec.inject.containers[0].image: Required value`,
		`b.yaml: document 2: policy "c": spec.inject.containers[0].name: "c" is also injected by policy "b"`,
		"3 problems",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint output lacks %q:\n%s", want, out)
		}
	}
	if code, out, _ := run("lint", "-c", "../../examples/seed-policies.yaml"); code != 0 || !strings.Contains(out, "2 policies, 2 webhook groups: no problems") {
		t.Errorf("clean lint: exit %d %s", code, out)
	}
}

func TestTestCommand(t *testing.T) {
	code, out, errs := run("test", "../../examples/tests")
	if code != 0 || !strings.Contains(out, "1 suites, 9 checks, 0 failed") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	// A suite whose expectation is wrong must fail, and say why.
	dir := t.TempDir()
	write(t, dir, "pods.yaml", pods)
	write(t, dir, "tollgate-test.yaml", `apiVersion: tollgate.dev/v1alpha1
kind: Test
metadata: {name: wrong}
resources: [pods.yaml]
results:
- policy: require-environment
  resources: [shop/bad]
  result: pass
- policy: require-environment
  resources: [shop/missing]
  result: pass
`)
	code, out, _ = run("test", dir)
	if code != 1 || !strings.Contains(out, "want pass, got fail") || !strings.Contains(out, "no such resource") || !strings.Contains(out, "2 checks, 2 failed") {
		t.Errorf("exit %d\n%s", code, out)
	}
	write(t, dir, "tollgate-test.yaml", "apiVersion: tollgate.dev/v1alpha1\nkind: Test\nresources: [pods.yaml]\nresults: [{policy: x, resources: [a], result: maybe}]\n")
	if code, _, errs := run("test", dir); code != 2 || !strings.Contains(errs, `result "maybe"`) {
		t.Errorf("bad suite: exit %d %s", code, errs)
	}
}

func TestReviewExitCodes(t *testing.T) {
	create := "../admission/testdata/review-pod-create.json"
	if code, out, _ := run("review", "-f", create, "--path", "/validate/require-environment"); code != 0 || !strings.Contains(out, `"allowed":true`) {
		t.Errorf("allowed review: exit %d %s", code, out)
	}
	dir := t.TempDir()
	body, _ := os.ReadFile(create)
	denied := write(t, dir, "denied.json", strings.Replace(string(body), `"environment":"prod"`, `"environment":"qa"`, 1))
	if code, out, _ := run("review", "-f", denied, "--path", "/validate/require-environment"); code != 1 || !strings.Contains(out, `"code":403`) {
		t.Errorf("denied review: exit %d %s", code, out)
	}
	garbage := write(t, dir, "garbage.json", "{")
	if code, _, errs := run("review", "-f", garbage, "--path", "/validate/require-environment"); code != 2 || !strings.Contains(errs, "HTTP 400") {
		t.Errorf("garbage: exit %d %s", code, errs)
	}
	// A review written by hand with "spec" twice in its Pod: refused, as
	// the apiserver's strict field validation refuses it, not decided on
	// the first spec and patched on the last.
	twice := write(t, dir, "twice.json", strings.Replace(string(body), `"spec":{`, `"spec":{"containers":[]},"spec":{`, 1))
	if code, _, errs := run("review", "-f", twice, "--path", "/validate/require-environment"); code != 2 || !strings.Contains(errs, `repeats the name "spec" in one object`) {
		t.Errorf("spec twice: exit %d %s", code, errs)
	}
	if code, _, errs := run("review", "-f", create); code != 2 || !strings.Contains(errs, "choose one with --path") {
		t.Errorf("no path: exit %d %s", code, errs)
	}
}

// TestPolicyLibrary runs the shipped library's suite and checks that every
// library policy is shown both allowing and refusing something.
func TestPolicyLibrary(t *testing.T) {
	code, out, errs := run("test", "../../policies/tests")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	set, err := policy.LoadPath("../../policies")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Policies) < 15 {
		t.Errorf("the library has %d policies, want at least 15", len(set.Policies))
	}
	s, err := suite.Load("../../policies/tests/tollgate-test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]map[engine.Outcome]bool{}
	for _, r := range s.Results {
		if seen[r.Policy] == nil {
			seen[r.Policy] = map[engine.Outcome]bool{}
		}
		seen[r.Policy][r.Result] = true
	}
	for _, p := range set.Policies {
		if !seen[p.Name()][engine.Pass] || !seen[p.Name()][engine.Fail] {
			t.Errorf("policy %s lacks a passing or a failing test", p.Name())
		}
	}
}
