//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// startTollgateWith serves docs from a second tollgate (with a kubeconfig, so
// it knows namespace labels) and registers it under name. On cleanup it
// unregisters, waits for gone (if given) to see the webhook let go of, and stops.
func startTollgateWith(t *testing.T, name string, gone func(context.Context) error, docs []byte) string {
	t.Helper()
	return serveAndRegister(t, name, gone, docs, "--kubeconfig", cluster.kubeconfig)
}

// startTollgateWithout is startTollgateWith for a tollgate without cluster
// access: it knows no namespace but by what the apiserver sends.
func startTollgateWithout(t *testing.T, name string, gone func(context.Context) error, docs []byte) string {
	t.Helper()
	return serveAndRegister(t, name, gone, docs)
}

func serveAndRegister(t *testing.T, name string, gone func(context.Context) error, docs []byte, args ...string) string {
	t.Helper()
	dir := filepath.Join(cluster.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "policies.yaml"), docs, 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := framework.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	logf, err := os.Create(filepath.Join(cluster.work, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cluster.bin, append([]string{"serve", "--listen", addr, "--config", dir,
		"--tls-cert-file", filepath.Join(cluster.certDir, certs.CertFile), "--tls-private-key-file", filepath.Join(cluster.certDir, certs.KeyFile),
		"--namespace", ownNamespace, "--register=false", "--leader-elect=false", "--metrics-listen="}, args...)...)
	cmd.Env = framework.ProcessEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Unregister before stopping, or every later test would call a
		// webhook that is gone.
		ctx := context.Background()
		_ = cluster.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
		_ = cluster.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
		// Wait until the apiserver's webhook informer has let go of it.
		for deadline := time.Now().Add(30 * time.Second); gone != nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if gone(ctx) == nil {
				break
			}
		}
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			data, _ := os.ReadFile(logf.Name())
			t.Logf("%s log:\n%s", name, tail(data, 6000))
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := httpsClient().Get("https://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready: %v", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err := exec.Command(cluster.bin, "manifests", "--config", dir, "--url", "https://"+addr, "--name", name,
		"--ca-file", filepath.Join(cluster.certDir, certs.CAFile), "--namespace", ownNamespace).Output()
	if err != nil {
		t.Fatalf("manifests: %v", err)
	}
	apply := exec.Command("kubectl", "--kubeconfig", cluster.kubeconfig, "apply", "--server-side", "-f", "-")
	apply.Stdin = bytes.NewReader(out)
	if msg, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, msg)
	}
	return addr
}
