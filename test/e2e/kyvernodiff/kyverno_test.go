//go:build e2e

// Package kyvernodiff is the differential against Kyverno itself: the same
// policies.kyverno.io policies and the same Pods, Deployments and CronJobs
// (and, for the policies that read objects with resource.Get and
// resource.List, Ingresses, a CertificateSigningRequest and execs into
// stored Pods, before and after a change of what they read) sent through
// tollgate must get the answers the real Kyverno gives on the same
// apiserver: every decision, denial message and warning.
//
// Kyverno's answers are recorded in testdata/kyverno-answers.json. make
// peers makes them: it runs the Kyverno hack/kyverno pins (built from the
// Go module proxy, started out of cluster against envtest's kube-apiserver)
// before tollgate, compares the two, and writes the file. make e2e reads
// it, and fails if it was recorded for other requests or pins.
//
// It needs KUBEBUILDER_ASSETS and the build tag e2e; TOLLGATE_KYVERNO (the
// binary make kyverno builds) runs Kyverno live, and TOLLGATE_KYVERNO_RECORD
// records its answers.
package kyvernodiff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// kyvernoModules are the modules whose CRDs Kyverno needs installed: its
// own (config/crds/...) and the openreports API it writes reports to.
var kyvernoModules = []string{"github.com/kyverno/kyverno", "github.com/openreports/reports-api"}

// kyvernoCRDs installs the CRDs of the Kyverno that hack/kyverno pins, read
// from the module cache (go mod download fetches them if absent).
func kyvernoCRDs(cfg *rest.Config) error {
	cmd := exec.Command("go", append([]string{"-C", filepath.Join(framework.RepoRoot(), "hack", "kyverno"), "mod", "download", "-json"}, kyvernoModules...)...)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go mod download %v: %w", kyvernoModules, err)
	}
	dirs := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m struct{ Path, Dir string }
		if err := dec.Decode(&m); err != nil {
			return fmt.Errorf("go mod download output: %w", err)
		}
		dirs[m.Path] = m.Dir
	}
	k, r := dirs[kyvernoModules[0]], dirs[kyvernoModules[1]]
	if k == "" || r == "" {
		return fmt.Errorf("go mod download gave no directory for %v: %s", kyvernoModules, out)
	}
	paths := []string{filepath.Join(r, "config", "crd")}
	for _, d := range []string{"kyverno", "policies.kyverno.io", "policyreport", "reports"} {
		paths = append(paths, filepath.Join(k, "config", "crds", d))
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("kyverno CRDs: %w", err)
	}
	return nil
}

// startKyverno runs the admission controller out of cluster as Kyverno's
// own launch configuration does (.vscode/launch.json): URL webhooks on
// 127.0.0.1, its namespace and ConfigMaps, PolicyExceptions enabled. It
// returns a function that stops it and removes the webhook configurations
// it registered.
func startKyverno(t *testing.T, bin, work, kubeconfig string, client kubernetes.Interface) func() {
	t.Helper()
	ctx := context.Background()
	if err := framework.EnsureNamespace(ctx, client, "kyverno", nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kyverno", "kyverno-metrics"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kyverno"}}
		if _, err := client.CoreV1().ConfigMaps("kyverno").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ports := make([]int, 3)
	for i := range ports {
		p, err := framework.FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	logPath := filepath.Join(work, "kyverno.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--kubeconfig="+kubeconfig,
		fmt.Sprintf("--serverIP=127.0.0.1:%d", ports[0]),
		fmt.Sprintf("--webhookServerPort=%d", ports[0]),
		fmt.Sprintf("--metricsPort=%d", ports[1]),
		fmt.Sprintf("--profilePort=%d", ports[2]),
		"--backgroundServiceAccountName=system:serviceaccount:kyverno:kyverno-background-controller",
		"--reportsServiceAccountName=system:serviceaccount:kyverno:kyverno-reports-controller",
		"--caSecretName=kyverno-svc.kyverno.svc.kyverno-tls-ca",
		"--tlsSecretName=kyverno-svc.kyverno.svc.kyverno-tls-pair",
		"--enablePolicyException=true",
		"--disableLogColor", "-v=2")
	cmd.Env = framework.ProcessEnv("KYVERNO_NAMESPACE=kyverno", "KYVERNO_SERVICEACCOUNT_NAME=kyverno-admission-controller",
		"KYVERNO_DEPLOYMENT=kyverno", "KYVERNO_POD_NAME=kyverno", "INIT_CONFIG=kyverno", "METRICS_CONFIG=kyverno-metrics")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		// Kyverno leaves its webhook configurations behind (in a cluster a
		// finalizer on its Deployment removes them): remove them, or the
		// apiserver would call a webhook that is gone.
		vwcs, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, w := range vwcs.Items {
				if strings.HasPrefix(w.Name, "kyverno-") {
					_ = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, w.Name, metav1.DeleteOptions{})
				}
			}
		}
		mwcs, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, w := range mwcs.Items {
				if strings.HasPrefix(w.Name, "kyverno-") {
					_ = client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, w.Name, metav1.DeleteOptions{})
				}
			}
		}
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			if len(data) > 6000 {
				data = data[len(data)-6000:]
			}
			t.Logf("kyverno log (tail):\n%s", data)
		}
	}
	t.Cleanup(stop)
	return stop
}

// kyvernoWebhooksCover waits until Kyverno's validating webhooks select
// every namespace label value in want (each cluster-wide policy of the
// differential has a namespace selector of its own, so its own webhook
// entry).
func kyvernoWebhooksCover(t *testing.T, client kubernetes.Interface, want []string) {
	t.Helper()
	start := time.Now()
	var missing []string
	for {
		vwcs, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, c := range vwcs.Items {
			for _, w := range c.Webhooks {
				if w.NamespaceSelector != nil {
					have[w.NamespaceSelector.MatchLabels[diffLabel]] = true
				}
			}
		}
		missing = missing[:0]
		for _, v := range want {
			if !have[v] {
				missing = append(missing, v)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("Kyverno registered no webhook for %v within 2m (it has %d configurations)", missing, len(vwcs.Items))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("Kyverno's webhooks cover all %d policies after %s", len(want), time.Since(start).Round(100*time.Millisecond))
}

// runKyverno installs Kyverno's CRDs, starts Kyverno, applies every policy
// as a user applies them, and returns its answers to every request, and to
// the resource suites' requests after their change (checking that taking
// the change back gives the answers before it). Kyverno is stopped when it
// returns.
func runKyverno(t *testing.T, bin, work, kubeconfig string, cfg *rest.Config, client kubernetes.Interface, cases, suites []policyCase) (answers, changed map[string]answer) {
	t.Helper()
	phase := time.Now()
	if err := kyvernoCRDs(cfg); err != nil {
		t.Fatal(err)
	}
	stop := startKyverno(t, bin, work, kubeconfig, client)
	defer stop()
	dyn := dynamic.NewForConfigOrDie(cfg)
	applyPolicies(t, dyn, cases)
	var selectors []string
	for _, c := range cases {
		if c.namespaced || len(c.docs) == 0 {
			continue // Kyverno selects its namespace by name; another namespace of a policy
		}
		selectors = append(selectors, c.name)
	}
	kyvernoWebhooksCover(t, client, selectors)
	answers = settled(t, cfg, cases, "Kyverno")
	// The resource library's suites again, after a change of the objects
	// they read (Kyverno reads them from the apiserver on each request),
	// and once more after the change is taken back.
	changeAll(t, dyn, false)
	changed = settled(t, cfg, suites, "Kyverno, changed")
	changeAll(t, dyn, true)
	if back := settled(t, cfg, suites, "Kyverno, changed back"); !same(back, subset(answers, back)) {
		t.Fatal("Kyverno's answers after the changes were taken back are not those before them")
	}
	t.Logf("Kyverno: %s", time.Since(phase).Round(100*time.Millisecond))
	return answers, changed
}

// recordedAgree requires Kyverno's live answers to be the recorded ones.
func recordedAgree(t *testing.T, rec, live recording) {
	t.Helper()
	for _, set := range []struct {
		name      string
		rec, live map[string]answer
	}{{"", rec.Answers, live.Answers}, {" after the change", rec.Changed, live.Changed}} {
		for _, k := range slices.Sorted(maps.Keys(set.live)) {
			if r, ok := set.rec[k]; !ok || r.String() != set.live[k].String() {
				t.Errorf("%s%s: Kyverno answers %s, %s recorded %s: make peers records its answers again", k, set.name, set.live[k], recordFile, r)
			}
		}
		for k := range set.rec {
			if _, ok := set.live[k]; !ok {
				t.Errorf("%s%s: recorded in %s, not asked: make peers records Kyverno's answers again", k, set.name, recordFile)
			}
		}
	}
}
