package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/staticmanifests"
)

// TestManifestsStatic runs tollgate manifests --static as an operator does,
// then loads the directory with the apiserver's loader.
func TestManifestsStatic(t *testing.T) {
	certDir := t.TempDir()
	if _, err := certs.EnsureSelfSigned(certDir, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	static := filepath.Join(t.TempDir(), "admission")
	code, out, errs := run("manifests", "--static", static, "--url", "https://127.0.0.1:8443", "--cert-dir", certDir, "--namespace", "tollgate-system")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"kind: AdmissionConfiguration",
		"- name: MutatingAdmissionWebhook",
		`staticManifestsDir: "` + filepath.Join(static, "mutating") + `"`,
		`staticManifestsDir: "` + filepath.Join(static, "validating") + `"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"wrote " + filepath.Join(static, "mutating", "tollgate.yaml") + ": MutatingWebhookConfiguration tollgate.static.k8s.io, 1 webhooks",
		"wrote " + filepath.Join(static, "validating", "tollgate.yaml") + ": ValidatingWebhookConfiguration tollgate.static.k8s.io, 1 webhooks",
		staticmanifests.ConfigInfoMetric + `{plugin="ValidatingAdmissionWebhook"} has hash="sha256:`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	m, v, err := staticmanifests.Load(static)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || len(v) != 1 || !strings.Contains(strings.Join(v[0].Webhooks[0].NamespaceSelector.MatchExpressions[0].Values, ","), "tollgate-system") {
		t.Errorf("loaded %d mutating, %d validating: %+v", len(m), len(v), v)
	}

	// Where the apiserver sees the directory, and its webhook credentials.
	code, out, errs = run("manifests", "--static", static, "--url", "https://127.0.0.1:8443", "--cert-dir", certDir,
		"--apiserver-static-dir", "/etc/kubernetes/admission", "--admission-kubeconfig", "/etc/kubernetes/webhook.kubeconfig")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{`staticManifestsDir: "/etc/kubernetes/admission/validating"`, `kubeConfigFile: "/etc/kubernetes/webhook.kubeconfig"`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

func TestStaticErrors(t *testing.T) {
	certDir := t.TempDir()
	if _, err := certs.EnsureSelfSigned(certDir, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	static := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"manifests", "--static", static, "--cert-dir", certDir, "--service-name", "tollgate", "--service-namespace", "tollgate-system"}, "the apiserver calls static webhooks by URL only"},
		{[]string{"manifests", "--static", static, "--cert-dir", certDir}, "--static needs --url"},
		{[]string{"manifests", "--static", static, "--cert-dir", certDir, "--url", "https://x", "--apiserver-static-dir", "admission"}, "the apiserver needs an absolute path"},
		{[]string{"manifests", "--cert-dir", certDir, "--url", "https://x", "--apiserver-static-dir", "/x"}, "go with --static"},
		{[]string{"serve", "--registration", "static", "--register=true"}, "contradict each other"},
		{[]string{"serve", "--registration", "static", "--cert-source", "self"}, "--registration=static cannot use --cert-source=self"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errs := run(tt.args...)
			if code != exitUsage || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q, want usage error mentioning %q", code, errs, tt.want)
			}
		})
	}
	if entries, _ := os.ReadDir(static); len(entries) != 0 {
		t.Errorf("refused commands wrote %d entries into the directory", len(entries))
	}
}

func TestStaticNote(t *testing.T) {
	tests := []struct {
		name   string
		loaded map[string]string
		err    error
		want   []string
	}{
		{"none loaded", map[string]string{}, nil, nil},
		{"loaded", map[string]string{staticmanifests.ValidatingPlugin: "sha256:2b"}, nil, []string{"has loaded static webhook manifests (ValidatingAdmissionWebhook sha256:2b)", "DIR/mutating/tg.yaml and DIR/validating/tg.yaml (configurations tg.static.k8s.io)", "before stopping tollgate"}},
		{"metrics unreadable", nil, errors.New("forbidden"), []string{"could not tell whether the apiserver reads static webhook manifests (forbidden)", "DIR/validating/tg.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := staticNote("tg", tt.loaded, tt.err)
			if tt.want == nil && got != "" {
				t.Errorf("note %q, want none", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("note %q lacks %q", got, w)
				}
			}
		})
	}
}
