//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tollgate-dev/tollgate/internal/certs"
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
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the end-to-end tests with `make e2e`, which builds kube-apiserver and etcd")
		return 1
	}
	work, err := os.MkdirTemp("", "tollgate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)

	env := &envtest.Environment{ControlPlaneStartTimeout: 2 * time.Minute}
	// envtest turns the ServiceAccount admission plugin off; a real cluster has
	// it, and it adds the kube-api-access volume before webhooks see a Pod.
	env.ControlPlane.GetAPIServer().Configure().Set("disable-admission-plugins", "")
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start control plane:", err)
		return 1
	}
	defer env.Stop()
	cluster.client = kubernetes.NewForConfigOrDie(cfg)

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
	cluster.bin = filepath.Join(work, "tollgate")
	build := exec.Command("go", "build", "-o", cluster.bin, "./cmd/tollgate")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
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

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cluster.addr = ln.Addr().String()
	ln.Close()
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
	)
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
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	applied := 0
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return fmt.Errorf("manifests do not decode strictly: %w", err)
		}
		create := metav1.CreateOptions{FieldValidation: "Strict"}
		switch o := obj.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			_, err = cluster.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, o, create)
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			_, err = cluster.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, o, create)
		default:
			return fmt.Errorf("unexpected %T in manifests", obj)
		}
		if err != nil {
			return fmt.Errorf("create %T: %w", obj, err)
		}
		applied++
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
		_, err := cluster.client.CoreV1().Pods("e2e-warmup").Create(ctx, pod("warmup", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
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
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := cluster.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !isAlreadyExists(err) {
		return err
	}
	// No controller-manager runs: make the ServiceAccount Pods need.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
	if _, err := cluster.client.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !isAlreadyExists(err) {
		return err
	}
	return nil
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
