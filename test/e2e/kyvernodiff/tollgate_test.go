//go:build e2e

package kyvernodiff

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// startTollgate serves the documents Kyverno was given from `tollgate serve
// --config` and registers what `tollgate manifests` prints for them.
func startTollgate(t *testing.T, work, kubeconfig string, cases []policyCase) {
	t.Helper()
	bin, err := framework.BuildTollgate(work)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(work, "policies")
	if err := os.MkdirAll(config, 0o755); err != nil {
		t.Fatal(err)
	}
	var docs bytes.Buffer
	for _, c := range cases {
		for _, d := range c.docs {
			docs.WriteString("---\n")
			docs.Write(d)
		}
	}
	if err := os.WriteFile(filepath.Join(config, "policies.yaml"), docs.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pki := filepath.Join(work, "pki")
	if _, err := certs.EnsureSelfSigned(pki, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	port, err := framework.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	logPath := filepath.Join(work, "tollgate.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--listen", addr, "--config", config, "--kubeconfig", kubeconfig,
		"--tls-cert-file", filepath.Join(pki, certs.CertFile), "--tls-private-key-file", filepath.Join(pki, certs.KeyFile),
		"--namespace", "tollgate-system", "--register=false", "--leader-elect=false", "--metrics-listen=")
	cmd.Env = framework.ProcessEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			if len(data) > 6000 {
				data = data[len(data)-6000:]
			}
			t.Logf("tollgate log (tail):\n%s", data)
		}
	})
	caPEM, err := os.ReadFile(filepath.Join(pki, certs.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	https := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	framework.WaitFor(t, 60*time.Second, "tollgate ready", func() bool {
		resp, err := https.Get("https://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	out, err := exec.Command(bin, "manifests", "--config", config, "--url", "https://"+addr, "--name", "tollgate-kyverno-diff",
		"--ca-file", filepath.Join(pki, certs.CAFile), "--namespace", "tollgate-system").Output()
	if err != nil {
		t.Fatalf("tollgate manifests: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(mustRead(t, kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	if _, err := framework.ApplyWebhooks(ctx, client, out); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
