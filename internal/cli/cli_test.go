package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/certs"
)

func run(args ...string) (code int, stdout, stderr string) { return runStdin("", args...) }

// runWant runs a command as a user does and wants its exit code and each
// of contains somewhere in its output.
func runWant(t *testing.T, code int, contains []string, args ...string) {
	t.Helper()
	got, out, errs := run(args...)
	if got != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, code, out, errs)
	}
	for _, c := range contains {
		if !strings.Contains(out+errs, c) {
			t.Errorf("output lacks %q:\n%s%s", c, out, errs)
		}
	}
}

func runStdin(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestManifests(t *testing.T) {
	dir := t.TempDir()
	if _, err := certs.EnsureSelfSigned(dir, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run("manifests", "--cert-dir", dir, "--service-name", "tollgate", "--service-namespace", "tollgate-system")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"kind: MutatingWebhookConfiguration", "kind: ValidatingWebhookConfiguration", "path: /mutate/nginx-sidecar", "- tollgate-system", "caBundle: LS0t", "failurePolicy: Ignore", "failurePolicy: Fail"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	code, out, errs = run("manifests", "--cert-dir", dir, "--service-name", "tollgate", "--service-namespace", "tollgate-system",
		"--failure-policy", "Fail", "--exclude-namespaces", "legacy,sandbox")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"- legacy", "- sandbox", "- tollgate-system"} {
		if !strings.Contains(out, want) {
			t.Errorf("with --exclude-namespaces, output lacks %q", want)
		}
	}
	if strings.Contains(out, "failurePolicy: Ignore") || strings.Count(out, "failurePolicy: Fail") != 2 {
		t.Errorf("--failure-policy Fail did not replace every webhook's:\n%s", out)
	}
}

func TestManifestsErrors(t *testing.T) {
	empty := t.TempDir()
	bad := filepath.Join(empty, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: tollgate.dev/v1alpha1\nkind: Policy\nmetadata: {name: x}\nspec: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"manifests", "--cert-dir", empty, "--url", "https://x"}, "run tollgate serve once with the same --cert-dir, or give --ca-file"},
		{[]string{"manifests", "--ca-file", filepath.Join(empty, "nope.pem"), "--url", "https://x"}, "nope.pem"},
		{[]string{"manifests", "--config", bad, "--url", "https://x"}, "bad.yaml: document 1: policy \"x\""},
		{[]string{"serve", "--tls-cert-file", "a.crt"}, "--tls-cert-file and --tls-private-key-file go together"},
		{[]string{"serve", "--log-level", "loud"}, "--log-level"},
		{[]string{"serve", "--config", bad}, "load policies"},
		{[]string{"serve", "extra-arg"}, "unknown command"},
		{[]string{"manifests", "--url", "https://x", "--ca-file", bad, "--failure-policy", "Sometimes"}, `failure policy "Sometimes": want Fail or Ignore`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errs := run(tt.args...)
			if code == 0 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q, want failure mentioning %q", code, errs, tt.want)
			}
		})
	}
}
