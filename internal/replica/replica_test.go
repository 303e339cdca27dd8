package replica

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/certs"
)

const requireEnvironment = `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: require-environment}
spec:
  match: {resources: [pods], operations: [CREATE, UPDATE]}
  validate:
    labels: [{key: environment, values: [dev, prod]}]
`

const requireTeam = `---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: require-team}
spec:
  match: {resources: [pods], operations: [CREATE]}
  validate:
    labels: [{key: team}]
`

// TestRun runs a replica without cluster access, as `tollgate serve` on a
// workstation: self-signed certificates in a directory, policies from a
// file that changes while it serves, metrics. It probes the server, reloads
// the policies, then shuts down: /readyz fails at once while metrics and
// reviews are still answered during the drain, and Run returns nil with
// nothing left running (TestMain).
func TestRun(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // never in-cluster, wherever the test runs
	dir := t.TempDir()
	ss, err := certs.EnsureSelfSigned(filepath.Join(dir, "certs"), nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	policies := filepath.Join(dir, "policies.yaml")
	if err := os.WriteFile(policies, []byte(requireEnvironment), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	cfg := Config{
		Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0",
		CertDir: filepath.Join(dir, "certs"), CertReloadInterval: time.Second,
		Policies: policies, PolicyReloadInterval: 50 * time.Millisecond,
		DrainDelay: 600 * time.Millisecond, ShutdownTimeout: 5 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()

	base := "https://" + logs.address(t, "serving admission reviews")
	metricsURL := "http://" + logs.address(t, "serving metrics") + "/metrics"
	ca, err := os.ReadFile(ss.CAPath())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	defer client.CloseIdleConnections()
	get := func(url string) int {
		t.Helper()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	review := func(path string) string {
		t.Helper()
		body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","namespace":"a","kind":{"kind":"Pod","version":"v1"},"resource":{"version":"v1","resource":"pods"},"object":{"metadata":{"name":"p","labels":{"environment":"dev"}}}}}`
		resp, err := client.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}

	if code := get(base + "/readyz"); code != http.StatusOK {
		t.Fatalf("readyz %d", code)
	}
	if got := review("/validate/require-environment"); !strings.Contains(got, `"allowed":true`) {
		t.Errorf("review: %s", got)
	}
	// A group the file does not have yet is allowed with a warning; once
	// the file has it, its policy decides.
	if got := review("/validate/require-team"); !strings.Contains(got, "no policies for this webhook yet") {
		t.Errorf("review of a path not loaded: %s", got)
	}
	// Each write differs from the last: the watcher takes its first look
	// when its goroutine starts, which under load may be after a write.
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; !strings.Contains(review("/validate/require-team"), `"allowed":false`); n++ {
		if time.Now().After(deadline) {
			t.Fatalf("the reloaded policy never decided; logs:\n%s", logs)
		}
		if n%10 == 0 {
			if err := os.WriteFile(policies, []byte(requireEnvironment+requireTeam+"# "+strconv.Itoa(n)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code := get(metricsURL); code != http.StatusOK {
		t.Errorf("metrics %d", code)
	}

	cancel()
	time.Sleep(150 * time.Millisecond) // into the drain
	if code := get(base + "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("readyz during the drain = %d, want 503", code)
	}
	if code := get(metricsURL); code != http.StatusOK {
		t.Errorf("metrics during the drain = %d: they stop after the server", code)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	for _, msg := range []string{"policies loaded", "self-signed serving certificate", "policies reloaded", "shutting down: draining"} {
		if !logs.has(msg) {
			t.Errorf("no log line %q", msg)
		}
	}
	if _, err := client.Get(base + "/healthz"); err == nil {
		t.Error("the server still answers after Run returned")
	}
}

// TestRunConfigErrors: a Config that cannot run ends Run at once with a
// *ConfigError saying why (serve's usage errors), or with the load error.
func TestRunConfigErrors(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	dir := t.TempDir()
	mine, err := certs.EnsureSelfSigned(filepath.Join(dir, "mine"), nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other, err := certs.EnsureSelfSigned(filepath.Join(dir, "other"), nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: tollgate.dev/v1alpha1\nkind: Policy\nmetadata: {name: x}\nspec: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cfg    Config
		config bool // a *ConfigError
		want   string
	}{
		{"certificate without key", Config{CertFile: "a.crt"}, true, "--tls-cert-file and --tls-private-key-file go together"},
		{"unknown certificate source", Config{Cluster: ClusterConfig{CertSource: "vault"}}, true, `--cert-source "vault": want files, self or cert-manager`},
		{"Secret without cluster access", Config{Cluster: ClusterConfig{CertSource: CertSourceSelf}}, true, "cluster access needed"},
		{"client CAs unreadable", Config{CertDir: dir, ClientCAFile: filepath.Join(dir, "nope.pem")}, true, "--client-ca-file"},
		{"policies that do not load", Config{Policies: bad}, false, "load policies"},
		{"unknown registration", Config{Cluster: ClusterConfig{Registration: "etcd"}}, true, `--registration "etcd": want api or static`},
		{"static with the Secret's rotating CA", Config{Cluster: ClusterConfig{Registration: RegistrationStatic, CertSource: CertSourceSelf}}, true, "after the first CA rotation every call would fail"},
		{"static with cert-manager's CA injection", Config{Cluster: ClusterConfig{Registration: RegistrationStatic, CertSource: CertSourceCertManager, InjectCAFrom: "ns/cert"}}, true, "cannot use --inject-ca-from"},
		{"static with certificate files and no CA", Config{CertFile: other.CertPath(), KeyFile: other.KeyPath(), Cluster: ClusterConfig{Registration: RegistrationStatic}}, true, "--registration=static needs --ca-file"},
		{"static with a certificate another CA signed", Config{CertFile: other.CertPath(), KeyFile: other.KeyPath(), Cluster: ClusterConfig{Registration: RegistrationStatic, CAFile: mine.CAPath()}}, false, "not signed by a CA of the trusted bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Listen = "127.0.0.1:0"
			tt.cfg.Logger = slog.New(slog.DiscardHandler)
			err := Run(context.Background(), tt.cfg)
			var ce *ConfigError
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.As(err, &ce) != tt.config {
				t.Errorf("Run = %v (config error: %v), want one mentioning %q (config error: %v)", err, ce != nil, tt.want, tt.config)
			}
		})
	}
}

// TestRunStatic: a static replica without cluster access serves its
// CertDir pair, trusting the CertDir CA (the manifests' caBundle), and says
// it never registers.
func TestRunStatic(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	dir := t.TempDir()
	logs := &logBuffer{}
	cfg := Config{
		Listen: "127.0.0.1:0", CertDir: dir, DrainDelay: time.Millisecond, ShutdownTimeout: time.Second,
		Logger:  slog.New(slog.NewJSONHandler(logs, nil)),
		Cluster: ClusterConfig{Registration: RegistrationStatic},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	logs.address(t, "serving admission reviews")
	if !logs.has("registration is static: the webhook configurations are the apiserver's static manifests; this replica never creates, repairs or deletes configurations through the API") {
		t.Errorf("no line saying registration is static:\n%s", logs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects a replica's JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lines are the log lines so far, decoded.
func (l *logBuffer) lines() []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func (l *logBuffer) has(msg string) bool {
	for _, m := range l.lines() {
		if m["msg"] == msg {
			return true
		}
	}
	return false
}

// address waits for the log line msg and returns its address.
func (l *logBuffer) address(t *testing.T, msg string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range l.lines() {
			if a, ok := m["address"].(string); ok && m["msg"] == msg {
				return a
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no log line %q; logs:\n%s", msg, l)
	return ""
}
