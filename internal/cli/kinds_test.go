package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// restricted is the Pod Security restricted set, as a user loads it.
var restricted = filepath.Join("..", "..", "policies", "sets", "pod-security-restricted.yaml")

// TestCheckAnyKind: an install manifest of CRDs, custom resources with and
// without their CRD, and built-in kinds of every group is checked, never
// an error, unless --strict-kinds asks for one.
func TestCheckAnyKind(t *testing.T) {
	install := filepath.Join("testdata", "kinds", "install.yaml")
	crds := filepath.Join("testdata", "kinds", "crds")
	guessed := `warning: monitoring.coreos.com/v1 ServiceMonitor: not a built-in kind, and no CustomResourceDefinition given for it (--crd); taken as namespaced resource "servicemonitors"`
	for _, tt := range []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		notOut   []string
		stderr   string // exactly, trimmed
		contains string // in stdout or stderr
	}{
		{name: "restricted: no error, the guess said", args: []string{"-f", install}, code: 0,
			stdout: []string{"15 pass, 0 fail, 0 warn, 0 error, 0 skip"}, notOut: []string{"Widget", "ServiceMonitor", "APIService"}, stderr: guessed},
		{name: "objects no policy matches listed as skipped", args: []string{"-f", install, "--show-skipped"}, code: 0,
			stdout: []string{"Widget gear", "ServiceMonitor monitoring/web", "APIService v1beta1.metrics.k8s.io", "CustomResourceDefinition widgets.example.com", "Lease web/leader", "0 error"}, stderr: guessed},
		{name: "the CRD given: nothing guessed", args: []string{"-f", install, "--crd", crds}, code: 0, stdout: []string{"0 error"}},
		{name: "strict: a kind without CRD is an error", args: []string{"-f", install, "--strict-kinds"}, code: 2,
			stdout: []string{"install.yaml:22: unknown kind monitoring.coreos.com/v1 ServiceMonitor: not a built-in kind, and no CustomResourceDefinition given for it (--crd) (--strict-kinds)", "1 error"}},
		{name: "strict with the CRD", args: []string{"-f", install, "--strict-kinds", "--crd", crds}, code: 0, stdout: []string{"0 error"}},
		{name: "--crd holds CRDs only", args: []string{"-f", install, "--crd", install}, code: 2,
			contains: "--crd: testdata/kinds/install.yaml:39: admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration web is not an apiextensions.k8s.io/v1 CustomResourceDefinition"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(append([]string{"check", "-c", restricted}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.notOut {
				if strings.Contains(out, s) {
					t.Errorf("stdout has %q:\n%s", s, out)
				}
			}
			if tt.contains == "" && strings.TrimSpace(errs) != tt.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", errs, tt.stderr)
			}
			if tt.contains != "" && !strings.Contains(out+errs, tt.contains) {
				t.Errorf("output lacks %q:\n%s%s", tt.contains, out, errs)
			}
		})
	}
}

// TestCheckCustomResources: policies that match custom resources decide
// them, by the resource a CRD names or the one guessed.
func TestCheckCustomResources(t *testing.T) {
	code, out, errs := run("check", "-c", filepath.Join("testdata", "kinds", "custom-policies.yaml"), "-f", filepath.Join("testdata", "kinds", "install.yaml"))
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, s := range []string{"small-widgets  fail    ValidatingAdmissionPolicy 'small-widgets' with binding 'small-widgets' denied request: widget default/gear is too big",
		"named-ports    fail    ValidatingAdmissionPolicy 'named-ports' with binding 'named-ports' denied request: endpoint port http is not allowed", "0 pass, 2 fail"} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
}

// TestCheckRepeatedNames: a Pod given twice, and one of that name in
// another namespace, are each checked; the repetition is a warning.
func TestCheckRepeatedNames(t *testing.T) {
	pods := filepath.Join("testdata", "kinds", "pods.yaml")
	code, out, errs := run("check", "-c", restricted, "-f", pods)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for row, n := range map[string]int{"Pod web ": 15, "Pod default/web ": 15, "Pod other/web ": 15} {
		if got := strings.Count(out, "\n"+row); got != n {
			t.Errorf("%d rows of %q, want %d:\n%s", got, row, n, out)
		}
	}
	want := "warning: Pod default/web is given 2 times (testdata/kinds/pods.yaml:1, testdata/kinds/pods.yaml:9); each is checked on its own"
	if strings.TrimSpace(errs) != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errs, want)
	}
}

// TestCheckParamsAmongManifests: a param among the manifests is read, the
// manifests may repeat names of kinds no policy reads as params, and a
// param given twice is refused naming both places.
func TestCheckParamsAmongManifests(t *testing.T) {
	dir := t.TempDir()
	config := write(t, dir, "policies.yaml", paramPolicies)
	limits := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits, namespace: shop}\ndata: {max: \"2\"}\n"
	withParam := write(t, dir, "app.yaml", limits+"---\n"+deploymentYAML("big", "3")+"---\n"+deploymentYAML("big", "3"))
	params := write(t, dir, "params.yaml", paramObjects)
	for _, tt := range []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"a ConfigMap param among the manifests", []string{"-f", withParam}, 1,
			[]string{"replicas must be at most 2", "warning: Deployment.apps shop/big is given 2 times (" + withParam + ":6, " + withParam + ":14)"}},
		{"the param also in --params: refused, naming both", []string{"-f", withParam, "--params", params}, 2,
			[]string{"params: ConfigMap shop/limits is given twice, at " + withParam + ":1 and at " + params + ":1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(append([]string{"check", "-c", config}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			for _, c := range tt.contains {
				if !strings.Contains(out+errs, c) {
					t.Errorf("output lacks %q:\n%s%s", c, out, errs)
				}
			}
		})
	}
}
