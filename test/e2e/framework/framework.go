//go:build e2e

// Package framework holds what the end-to-end test packages share: starting
// a real kube-apiserver and etcd, building tollgate, and small helpers.
package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// StartControlPlane starts kube-apiserver and etcd from KUBEBUILDER_ASSETS
// with extra apiserver flags. envtest turns the ServiceAccount admission
// plugin off; it is turned back on, as in a real cluster, where it adds the
// kube-api-access volume before webhooks see a Pod.
func StartControlPlane(apiserverFlags map[string]string) (*envtest.Environment, kubernetes.Interface, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, nil, errors.New("KUBEBUILDER_ASSETS is not set: run the end-to-end tests with `make e2e`, which builds kube-apiserver and etcd")
	}
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	env := &envtest.Environment{ControlPlaneStartTimeout: 2 * time.Minute}
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Set("disable-admission-plugins", "")
	for k, v := range apiserverFlags {
		args.Set(k, v)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("start control plane: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		_ = env.Stop()
		return nil, nil, err
	}
	return env, client, nil
}

// BuildTollgate puts into dir the tollgate binary of the image make image
// builds (hack/image), for this machine's platform: the binary users run.
// TOLLGATE_IMAGE names the OCI layout make e2e built; without it, the
// image is built here, for this platform only.
func BuildTollgate(dir string) (string, error) {
	root := RepoRoot()
	layoutDir := os.Getenv("TOLLGATE_IMAGE")
	if layoutDir == "" {
		out := filepath.Join(dir, "image")
		build := exec.Command("go", "-C", filepath.Join(root, "hack", "image"), "run", ".", "-root", root, "-out", out, "-platforms", runtime.GOOS+"/"+runtime.GOARCH)
		if b, err := build.CombinedOutput(); err != nil {
			return "", fmt.Errorf("make image: %v\n%s", err, b)
		}
		layoutDir = filepath.Join(out, "oci")
	}
	bin := filepath.Join(dir, "tollgate")
	extract := exec.Command("go", "-C", filepath.Join(root, "hack", "image"), "run", ".", "extract", "-layout", layoutDir, "-o", bin)
	if b, err := extract.CombinedOutput(); err != nil {
		return "", fmt.Errorf("the binary of the image in %s: %v\n%s", layoutDir, err, b)
	}
	return bin, nil
}

// RepoRoot is the repository's top directory: the first above the working
// directory (a test runs in its package's) with tollgate's go.mod. The
// source file's own path is no help: make builds with -trimpath.
func RepoRoot() string {
	repoRoot.once.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			panic(err)
		}
		for d := dir; ; d = filepath.Dir(d) {
			if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.HasPrefix(string(data), "module github.com/tollgate-dev/tollgate\n") {
				repoRoot.dir = d
				return
			}
			if filepath.Dir(d) == d {
				panic("no tollgate go.mod above " + dir)
			}
		}
	})
	return repoRoot.dir
}

var repoRoot struct {
	once sync.Once
	dir  string
}

// FreePort returns a port free on host now.
func FreePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// EnsureNamespace creates a namespace and, since no controller-manager runs,
// the default ServiceAccount Pods need.
func EnsureNamespace(ctx context.Context, client kubernetes.Interface, name string, labels map[string]string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
	if _, err := client.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// Pod is a minimal Pod with the given labels and annotations.
func Pod(name string, labels, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1.0"}},
		},
	}
}

// Count counts the items for which pred holds.
func Count[T any](items []T, pred func(T) bool) int {
	n := 0
	for _, it := range items {
		if pred(it) {
			n++
		}
	}
	return n
}

// IsSidecar tells whether c is the seed policy's sidecar.
func IsSidecar(c corev1.Container) bool { return c.Name == "sidecar-nginx" }

// ProcessEnv is this process's environment without KUBERNETES_SERVICE_HOST,
// so a tollgate started by a test never mistakes the machine it runs on
// (which may itself be a Pod) for the cluster under test.
func ProcessEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBERNETES_SERVICE_HOST=") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// Deref is *s, or "" for nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Load calls a function from several goroutines until stopped, counting
// the calls and the failures: the steady traffic of the end-to-end tests.
type Load struct {
	attempts, failures atomic.Int64
	first              atomic.Pointer[string]
	stop               chan struct{}
	wg                 sync.WaitGroup
}

// StartLoad runs fn(worker, i) in a loop on each of workers goroutines.
func StartLoad(workers int, fn func(worker, i int) error) *Load {
	l := &Load{stop: make(chan struct{})}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				l.attempts.Add(1)
				if err := fn(w, i); err != nil {
					l.failures.Add(1)
					msg := err.Error()
					l.first.CompareAndSwap(nil, &msg)
				}
			}
		}()
	}
	return l
}

// Stop ends the load and reports the calls, the failures and the first error.
func (l *Load) Stop() (attempts, failures int64, first string) {
	close(l.stop)
	l.wg.Wait()
	return l.attempts.Load(), l.failures.Load(), Deref(l.first.Load())
}

// WaitFor polls cond until it holds and says how long that took; after
// timeout it fails the test, naming what did not happen.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}
