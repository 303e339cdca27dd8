package staticmanifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/admission"
	webhookconfig "k8s.io/apiserver/pkg/admission/plugin/webhook/config"
	apiserverapi "k8s.io/apiserver/pkg/apis/apiserver"
	apiserverapiv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/registration"
)

func build(t *testing.T, opts registration.Options) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	t.Helper()
	set, err := policy.LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join("testdata", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	opts.CABundle = ca
	m, v, err := registration.Build(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, v
}

func registrationOptions() registration.Options {
	return registration.Options{URL: "https://10.0.0.1:8443"}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	m, v := build(t, registrationOptions())
	// Another static configuration of the operator's, which Write leaves alone.
	other := filepath.Join(dir, ValidatingDir, "other.yaml")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	otherYAML := mustRead(t, "testdata/other.yaml")
	if err := os.WriteFile(other, []byte(otherYAML), 0o644); err != nil {
		t.Fatal(err)
	}

	files, err := Write(dir, "tollgate", m, v)
	if err != nil {
		t.Fatal(err)
	}
	want := []File{
		{Path: filepath.Join(dir, "mutating", "tollgate.yaml"), Kind: "MutatingWebhookConfiguration", Name: "tollgate.static.k8s.io", Webhooks: 1},
		{Path: filepath.Join(dir, "validating", "tollgate.yaml"), Kind: "ValidatingWebhookConfiguration", Name: "tollgate.static.k8s.io", Webhooks: 1},
	}
	if len(files) != 2 || files[0] != want[0] || files[1] != want[1] {
		t.Errorf("files %+v\nwant %+v", files, want)
	}
	mutating, validating, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(mutating) != 1 || mutating[0].Name != "tollgate.static.k8s.io" || len(validating) != 2 {
		t.Fatalf("loaded %d mutating, %d validating", len(mutating), len(validating))
	}
	if got := *mutating[0].Webhooks[0].ClientConfig.URL; got != "https://10.0.0.1:8443/mutate/nginx-sidecar" {
		t.Errorf("url %s", got)
	}
	if m.Name != "tollgate" {
		t.Errorf("Write changed its argument's name to %s", m.Name)
	}

	// A set that needs no mutating webhook removes that file only.
	files, err = Write(dir, "tollgate", nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if !files[0].Removed || files[1].Removed {
		t.Errorf("files %+v: want the mutating one removed", files)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the operator's file: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ValidatingDir))
	if len(entries) != 2 {
		t.Errorf("validating directory holds %d entries, want 2 (no temporary file left)", len(entries))
	}
}

func TestWriteRefused(t *testing.T) {
	m, v := build(t, registration.Options{Service: &registration.Service{Name: "tollgate", Namespace: "tollgate-system"}})
	_, byURL := build(t, registration.Options{URL: "https://10.0.0.1:8443"})
	tests := []struct {
		name     string
		existing string // a file already in the validating directory
		base     string
		m        *admissionregistrationv1.MutatingWebhookConfiguration
		v        *admissionregistrationv1.ValidatingWebhookConfiguration
		want     string
	}{
		{name: "service", base: "tollgate", m: m, v: v, want: "clientConfig.service is not supported for static manifests"},
		{name: "clash", base: "tollgate", v: byURL, existing: "name: tollgate.static.k8s.io", want: `duplicate name "tollgate.static.k8s.io"`},
		{name: "path", base: "../x", v: byURL, want: "want a plain name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.existing != "" {
				other := strings.ReplaceAll(mustRead(t, "testdata/other.yaml"), "name: other.static.k8s.io", tt.existing)
				if err := os.MkdirAll(filepath.Join(dir, ValidatingDir), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ValidatingDir, "a.yaml"), []byte(other), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Write(dir, tt.base, tt.m, tt.v)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, ValidatingDir, "tollgate.yaml")); err == nil {
				t.Error("a refused configuration was written")
			}
		})
	}
}

// TestAdmissionConfiguration reads the configuration as kube-apiserver
// reads --admission-control-config-file, then each plugin's part as the
// webhook plugins read theirs.
func TestAdmissionConfiguration(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{MutatingDir, ValidatingDir} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, dir, kubeconfig, want string
	}{
		{name: "dir", dir: dir},
		{name: "with kubeconfig", dir: dir, kubeconfig: "/etc/kubernetes/webhook.kubeconfig"},
		{name: "relative", dir: "static", want: "absolute path"},
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(apiserverapi.AddToScheme(scheme))
	utilruntime.Must(apiserverapiv1.AddToScheme(scheme))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := AdmissionConfiguration(tt.dir, tt.kubeconfig)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "admission.yaml")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			provider, err := admission.ReadAdmissionConfiguration([]string{MutatingPlugin, ValidatingPlugin}, file, scheme)
			if err != nil {
				t.Fatal(err)
			}
			for plugin, sub := range map[string]string{MutatingPlugin: MutatingDir, ValidatingPlugin: ValidatingDir} {
				r, err := provider.ConfigFor(plugin)
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := webhookconfig.LoadConfig(r)
				if err != nil {
					t.Fatalf("%s: %v\n%s", plugin, err, data)
				}
				if cfg.StaticManifestsDir != filepath.Join(dir, sub) || cfg.KubeConfigFile != tt.kubeconfig {
					t.Errorf("%s: staticManifestsDir %q, kubeConfigFile %q", plugin, cfg.StaticManifestsDir, cfg.KubeConfigFile)
				}
			}
		})
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{"tollgate": "tollgate.static.k8s.io", "x.static.k8s.io": "x.static.k8s.io"} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}

func mustRead(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
