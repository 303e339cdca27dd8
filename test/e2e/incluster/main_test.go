//go:build e2e

// Package incluster proves tollgate's in-cluster mode against a real
// kube-apiserver: deploy/ applied, replicas running as the deploy's
// ServiceAccount, reached through the Service (aggregator routing and
// EndpointSlices), certificates and CA rotated under load, leader failover.
package incluster

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

const (
	ns          = "tollgate-system"
	serviceName = "tollgate"
	replicas    = 3
)

type replica struct {
	id      int
	port    int
	metrics int
	cmd     *exec.Cmd
	log     string
	exited  chan struct{}
}

var env struct {
	client          kubernetes.Interface
	adminKubeconfig string
	saKubeconfig    string
	bin             string
	hostIP          string
	work            string
	policies        string
	replicas        []*replica
	controlPlane    *envtest.Environment
	// apiserver is set once a test has stopped and started the apiserver.
	apiserver *framework.APIServer
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	cp, client, err := framework.StartControlPlane(map[string]string{"enable-aggregator-routing": "true"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cp.Stop()
	env.client = client
	env.controlPlane = cp
	if env.work, err = os.MkdirTemp("", "tollgate-incluster-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if os.Getenv("TOLLGATE_E2E_KEEP") == "" { // keep the logs for a look
		defer os.RemoveAll(env.work)
	}
	env.adminKubeconfig = filepath.Join(env.work, "admin.kubeconfig")
	if err := os.WriteFile(env.adminKubeconfig, cp.KubeConfig, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := setUp(cp.Config.Host, cp.Config.CAData); err != nil {
		fmt.Fprintln(os.Stderr, "set up:", err)
		dumpLogs()
		stopAll()
		return 1
	}
	code := m.Run()
	if code != 0 {
		dumpLogs()
	}
	stopAll()
	if env.apiserver != nil {
		env.apiserver.Kill()
	}
	return code
}

func setUp(host string, caData []byte) error {
	var err error
	if env.hostIP, err = hostIP(); err != nil {
		return err
	}
	if env.bin, err = framework.BuildTollgate(env.work); err != nil {
		return err
	}
	// deploy/ (or the Helm chart) as a user applies it: server-side, every object.
	out, what, err := install()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", what, err, out)
	}
	fmt.Fprintf(os.Stderr, "%s:\n%s", what, out)
	if err := saKubeconfig(host, caData); err != nil {
		return err
	}
	// The replicas read a copy of the deploy's policies that a test edits.
	env.policies = filepath.Join(env.work, "policies")
	if err := os.MkdirAll(env.policies, 0o755); err != nil {
		return err
	}
	seed, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "deploy", "base", "policies", "seed-policies.yaml"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(env.policies, "seed-policies.yaml"), seed, 0o644); err != nil {
		return err
	}
	for i := range replicas {
		if err := startReplica(i); err != nil {
			return err
		}
	}
	if err := routeWhenReady(90 * time.Second); err != nil {
		return err
	}
	return waitForWebhooks(90 * time.Second)
}

// hostIP is a non-loopback IPv4 address of this machine: EndpointSlices may
// not point at loopback.
func hostIP() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
			return ipn.IP.String(), nil
		}
	}
	return "", errors.New("no non-loopback IPv4 address: the Service's EndpointSlice needs one")
}

// saKubeconfig writes a kubeconfig holding a token of the deploy's
// ServiceAccount: the replicas have exactly the deploy's RBAC.
func saKubeconfig(host string, caData []byte) error {
	ctx := context.Background()
	var tok *authenticationv1.TokenRequest
	var err error
	for range 50 {
		tok, err = env.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, serviceName,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("token for the tollgate ServiceAccount: %w", err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: caData}
	cfg.AuthInfos["tollgate"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["tollgate"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "tollgate"}
	cfg.CurrentContext = "tollgate"
	env.saKubeconfig = filepath.Join(env.work, "sa.kubeconfig")
	return clientcmd.WriteToFile(*cfg, env.saKubeconfig)
}

func startReplica(i int) error {
	port, err := framework.FreePort(env.hostIP)
	if err != nil {
		return err
	}
	mport, err := framework.FreePort("127.0.0.1")
	if err != nil {
		return err
	}
	r := &replica{id: i, port: port, metrics: mport}
	if err := launch(r); err != nil {
		return err
	}
	env.replicas = append(env.replicas, r)
	return nil
}

// routeWhenReady puts each replica in the Service once its /readyz says
// so, as the EndpointSlice controller does for a ready Pod: before, the
// apiserver's calls to it would be refused.
func routeWhenReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, r := range env.replicas {
		why := readiness(r)
		for ; why != "ok"; why = readiness(r) {
			if !alive(r) {
				return fmt.Errorf("replica %d exited before it was ready", r.id)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("replica %d not ready after %s: %s", r.id, timeout, why)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err := putEndpointSlice(r); err != nil {
			return err
		}
	}
	return nil
}

// launch starts (or starts again) a replica's process on its ports.
func launch(r *replica) error {
	r.exited = make(chan struct{})
	r.log = filepath.Join(env.work, fmt.Sprintf("replica-%d-%d.log", r.id, time.Now().UnixNano()))
	logf, err := os.Create(r.log)
	if err != nil {
		return err
	}
	r.cmd = exec.Command(env.bin, "serve",
		"--kubeconfig", env.saKubeconfig,
		"--namespace", ns,
		"--config", env.policies,
		"--config-reload-interval", "250ms",
		"--cert-source", "self",
		"--listen", net.JoinHostPort(env.hostIP, fmt.Sprint(r.port)),
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", r.metrics),
		// Short lifetimes, so that the test sees renewals and a CA rotation.
		"--cert-lifetime", "12s",
		"--ca-lifetime", "36s",
		"--ca-overlap", "3s",
		"--cert-check-interval", "300ms",
		"--lease-duration", "4s",
		"--lease-renew-deadline", "3s",
		"--lease-retry-period", "500ms",
		"--registration-resync", "5s",
		"--shutdown-drain-delay", "2s",
	)
	r.cmd.Env = framework.ProcessEnv(fmt.Sprintf("POD_NAME=replica-%d", r.id))
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		return err
	}
	exited := r.exited
	go func() { _ = r.cmd.Wait(); logf.Close(); close(exited) }()
	return nil
}

// putEndpointSlice does what the EndpointSlice controller does for a ready Pod.
func putEndpointSlice(r *replica) error {
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-replica-%d", serviceName, r.id),
			Namespace: ns,
			Labels:    map[string]string{discoveryv1.LabelServiceName: serviceName, discoveryv1.LabelManagedBy: "e2e.tollgate.dev"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("https"), Port: ptr(int32(r.port))}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{env.hostIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}}},
	}
	_, err := env.client.DiscoveryV1().EndpointSlices(ns).Create(context.Background(), slice, metav1.CreateOptions{})
	return err
}

func removeEndpointSlice(r *replica) error {
	err := env.client.DiscoveryV1().EndpointSlices(ns).Delete(context.Background(), fmt.Sprintf("%s-replica-%d", serviceName, r.id), metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// waitForWebhooks waits until a Pod that must be denied is denied through
// the Service: certificates made, configurations registered, routing done.
func waitForWebhooks(timeout time.Duration) error {
	ctx := context.Background()
	if err := framework.EnsureNamespace(ctx, env.client, "e2e-warmup", nil); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		_, err := env.client.CoreV1().Pods("e2e-warmup").Create(ctx, framework.Pod("warmup", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "violates policy require-environment") {
			return nil
		}
		last = err
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("webhooks not in effect through the Service after %s; last answer: %v", timeout, last)
}

// caPool is the CA bundle tollgate keeps in its Secret.
func caPool(ctx context.Context) (*x509.CertPool, error) {
	sec, err := env.client.CoreV1().Secrets(ns).Get(ctx, "tollgate-certs", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(sec.Data["ca.crt"]) {
		return nil, errors.New("no CA in the Secret")
	}
	return pool, nil
}

func kill(r *replica, sig syscall.Signal) {
	if r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(sig)
	}
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
}

func alive(r *replica) bool {
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

func stopAll() {
	for _, r := range env.replicas {
		if alive(r) {
			kill(r, syscall.SIGTERM)
		}
	}
}

func dumpLogs() {
	for _, r := range env.replicas {
		data, _ := os.ReadFile(r.log)
		if len(data) > 8000 {
			data = data[len(data)-8000:]
		}
		fmt.Fprintf(os.Stderr, "---- replica %d log (tail) ----\n%s\n", r.id, data)
	}
}

func ptr[T any](v T) *T { return &v }
