//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// The namespace tollgate is told is its own.
const ownNamespace = "tollgate-system"

// cluster is what every test shares: the apiserver, and tollgate serving it.
var cluster struct {
	client   kubernetes.Interface
	bin      string // the tollgate binary
	addr     string // 127.0.0.1:PORT tollgate serves on
	certDir  string // CA and the material tollgate serves from
	servDir  string // the certificate files tollgate serves (replaced by the reload test)
	caPool   *x509.CertPool
	logFile  string
	tollgate *exec.Cmd
	// restConfig and kubeconfig are the admin's, for tests that need more.
	restConfig *rest.Config
	kubeconfig string
	work       string
	// auditLog is the apiserver's audit log: the replay test's namespaces
	// at RequestResponse level (replay_test.go), nothing else.
	auditLog string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	work, err := os.MkdirTemp("", "tollgate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)

	// The apiserver authenticates to webhooks with a client certificate, as
	// an AdmissionConfiguration tells it; tollgate requires one (--client-ca-file).
	admissionConfig, err := clientAuthConfig(work)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	auditPolicy, err := writeAuditPolicy(work)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster.auditLog = filepath.Join(work, "audit.log")
	env, client, err := framework.StartControlPlane(map[string]string{
		"admission-control-config-file": admissionConfig,
		"audit-policy-file":             auditPolicy,
		"audit-log-path":                cluster.auditLog,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	cluster.client = client
	cluster.restConfig = env.Config
	cluster.work = work
	cluster.kubeconfig = filepath.Join(work, "admin.kubeconfig")
	if err := os.WriteFile(cluster.kubeconfig, env.KubeConfig, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	if err := startTollgate(work); err != nil {
		fmt.Fprintln(os.Stderr, "start tollgate:", err)
		dumpLog()
		return 1
	}
	defer func() {
		_ = cluster.tollgate.Process.Signal(os.Interrupt)
		_ = cluster.tollgate.Wait()
	}()
	if err := register(); err != nil {
		fmt.Fprintln(os.Stderr, "register webhooks:", err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		dumpLog()
	}
	return code
}

// startTollgate builds the binary, makes a CA and serving certificate, and
// runs `tollgate serve` on a free port until it is ready.
func startTollgate(work string) error {
	var err error
	if cluster.bin, err = framework.BuildTollgate(work); err != nil {
		return err
	}
	cluster.certDir = filepath.Join(work, "pki")
	if _, err := certs.EnsureSelfSigned(cluster.certDir, nil, time.Now()); err != nil {
		return err
	}
	cluster.servDir = filepath.Join(work, "serving")
	if err := os.MkdirAll(cluster.servDir, 0o700); err != nil {
		return err
	}
	for _, f := range []string{certs.CertFile, certs.KeyFile} {
		if err := copyFile(filepath.Join(cluster.certDir, f), filepath.Join(cluster.servDir, f)); err != nil {
			return err
		}
	}
	caPEM, err := os.ReadFile(filepath.Join(cluster.certDir, certs.CAFile))
	if err != nil {
		return err
	}
	cluster.caPool = x509.NewCertPool()
	cluster.caPool.AppendCertsFromPEM(caPEM)

	port, err := framework.FreePort("127.0.0.1")
	if err != nil {
		return err
	}
	cluster.addr = fmt.Sprintf("127.0.0.1:%d", port)
	cluster.logFile = filepath.Join(work, "tollgate.log")
	logf, err := os.Create(cluster.logFile)
	if err != nil {
		return err
	}
	cluster.tollgate = exec.Command(cluster.bin, "serve",
		"--listen", cluster.addr,
		"--tls-cert-file", filepath.Join(cluster.servDir, certs.CertFile),
		"--tls-private-key-file", filepath.Join(cluster.servDir, certs.KeyFile),
		"--namespace", ownNamespace,
		"--cert-reload-interval", "200ms",
		"--client-ca-file", filepath.Join(work, "client-ca.crt"),
		"--metrics-listen=", // no fixed port: e2e runs may share the machine
	)
	cluster.tollgate.Env = framework.ProcessEnv()
	cluster.tollgate.Stdout, cluster.tollgate.Stderr = logf, logf
	if err := cluster.tollgate.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := httpsClient().Get("https://" + cluster.addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("tollgate not ready at %s within 30s", cluster.addr)
}

// register applies, unchanged, what `tollgate manifests` prints.
func register() error {
	out, err := exec.Command(cluster.bin, "manifests",
		"--url", "https://"+cluster.addr,
		"--ca-file", filepath.Join(cluster.certDir, certs.CAFile),
		"--namespace", ownNamespace,
	).Output()
	if err != nil {
		return fmt.Errorf("tollgate manifests: %w", err)
	}
	ctx := context.Background()
	applied, err := framework.ApplyWebhooks(ctx, cluster.client, out)
	if err != nil {
		return err
	}
	if applied != 2 {
		return fmt.Errorf("manifests held %d configurations, want 2", applied)
	}
	// The apiserver picks up new webhook configurations asynchronously: wait
	// until a Pod that must be denied is denied.
	if err := ensureNamespace("e2e-warmup", nil); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		_, err := cluster.client.CoreV1().Pods("e2e-warmup").Create(ctx, framework.Pod("warmup", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "violates policy require-environment") {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("webhooks not in effect after 30s")
}

func httpsClient() *http.Client {
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cluster.caPool, MinVersion: tls.VersionTLS12}},
	}
}

func ensureNamespace(name string, labels map[string]string) error {
	return framework.EnsureNamespace(context.Background(), cluster.client, name, labels)
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}

func dumpLog() {
	if cluster.logFile == "" {
		return
	}
	data, _ := os.ReadFile(cluster.logFile)
	if len(data) > 20000 {
		data = data[len(data)-20000:]
	}
	fmt.Fprintf(os.Stderr, "---- tollgate log (tail) ----\n%s\n", data)
}

// clientAuthConfig writes the client CA tollgate trusts, and the
// AdmissionConfiguration whose kubeconfig makes the apiserver present a
// certificate it signed to every webhook ("*").
func clientAuthConfig(work string) (string, error) {
	pair, err := certs.NewClientPair("kube-apiserver", 24*time.Hour, time.Now())
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(work, "client-ca.crt"), pair.CA, 0o644); err != nil {
		return "", err
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate-data: %s
    client-key-data: %s
`, base64.StdEncoding.EncodeToString(pair.Cert), base64.StdEncoding.EncodeToString(pair.Key))
	kcPath := filepath.Join(work, "webhook-client.kubeconfig")
	if err := os.WriteFile(kcPath, []byte(kubeconfig), 0o600); err != nil {
		return "", err
	}
	plugin := func(name string) string {
		return fmt.Sprintf("- name: %s\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: %s\n", name, kcPath)
	}
	config := "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n" + plugin("ValidatingAdmissionWebhook") + plugin("MutatingAdmissionWebhook")
	path := filepath.Join(work, "admission-config.yaml")
	return path, os.WriteFile(path, []byte(config), 0o644)
}
