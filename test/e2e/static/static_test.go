//go:build e2e

// Package static proves tollgate's webhooks as the apiserver's static
// admission manifests (KEP-5793) against a real kube-apiserver: written by
// `tollgate manifests --static`, read by the apiserver before it serves,
// invisible to and undeletable through the API, reloaded when the files
// change, and trusted across a rolling restart with a renewed certificate.
package static

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/staticmanifests"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

const requireTeam = `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: require-team}
spec:
  match: {resources: [configmaps], operations: [CREATE]}
  failurePolicy: Fail
  validate:
    labels: [{key: team, values: [a, b]}]
`

func TestStaticManifests(t *testing.T) {
	work, bin, pki, roots := setup(t)
	policies := filepath.Join(work, "policies")
	if err := os.MkdirAll(policies, 0o755); err != nil {
		t.Fatal(err)
	}
	seed, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "examples", "seed-policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(policies, "seed.yaml"), seed, 0o644); err != nil {
		t.Fatal(err)
	}

	// Two replicas behind one address, started before the apiserver.
	a := newReplica(t, bin, work, "a", pki, policies)
	b := newReplica(t, bin, work, "b", pki, policies)
	for _, r := range []*replica{a, b} {
		r.start(t, roots)
		defer r.stop()
	}
	fwd := newForwarder(t, a.addr, b.addr)
	dir := filepath.Join(work, "admission")
	manifests := func() (config, stderr string) {
		t.Helper()
		cmd := exec.Command(bin, "manifests", "--static", dir, "--url", "https://"+fwd.addr(),
			"--ca-file", filepath.Join(pki, certs.CAFile), "--config", policies, "--namespace", "tollgate-system")
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tollgate manifests --static: %v\n%s", err, errb.String())
		}
		return string(out), errb.String()
	}
	config, written := manifests()
	t.Logf("tollgate manifests --static:\n%s%s", written, config)
	configFile := filepath.Join(work, "admission-configuration.yaml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}

	started := time.Now()
	env, client, err := framework.StartControlPlane(map[string]string{
		"admission-control-config-file": configFile,
		"feature-gates":                 "ManifestBasedAdmissionControlConfig=true",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	t.Logf("apiserver ready %v after start", time.Since(started).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The first Pods after start: injected and validated, with no wait for
	// anything to be registered.
	ns := "static"
	if err := framework.EnsureNamespace(ctx, client, ns, map[string]string{"sidecar-injection": "enabled"}); err != nil {
		t.Fatal(err)
	}
	p, err := client.CoreV1().Pods(ns).Create(ctx, framework.Pod("first", map[string]string{"environment": "dev"}, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("first Pod: %v", err)
	}
	if n := framework.Count(p.Spec.Containers, framework.IsSidecar); n != 1 {
		t.Errorf("first Pod has %d sidecars, want 1", n)
	}
	_, err = client.CoreV1().Pods(ns).Create(ctx, framework.Pod("second", nil, nil), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "violates policy require-environment") {
		t.Fatalf("second Pod, without the environment label: %v, want denied", err)
	}
	t.Logf("first Pod after start injected (1 sidecar); second denied: %v", err)

	checkAPI(ctx, t, client)
	checkReload(ctx, t, client, dir, manifests, []*replica{a, b}, policies)
	checkRollingRestart(ctx, t, client, ns, pki, roots, []*replica{a, b})

	// tollgate uninstall deletes nothing, and says which files to remove.
	kubeconfig := filepath.Join(work, "admin.kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "uninstall", "--kubeconfig", kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("tollgate uninstall: %v\n%s", err, out)
	}
	for _, want := range []string{"no webhook configurations named tollgate", "the apiserver has loaded static webhook manifests (MutatingAdmissionWebhook sha256:", "DIR/validating/tollgate.yaml"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tollgate uninstall says:\n%s\nwant %q", out, want)
		}
	}
	t.Logf("tollgate uninstall:\n%s", out)
}

// checkAPI: the static configurations are neither listed, nor read, nor
// deleted, nor shadowed through the API, and go on being enforced.
func checkAPI(ctx context.Context, t *testing.T, client kubernetes.Interface) {
	api := client.AdmissionregistrationV1()
	name := staticmanifests.Name("tollgate")
	mutating, err := api.MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	validating, err := api.ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mutating.Items)+len(validating.Items) != 0 {
		t.Errorf("the API lists %d mutating and %d validating configurations, want none", len(mutating.Items), len(validating.Items))
	}
	if _, err := api.ValidatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get %s: %v, want NotFound", name, err)
	}
	if err := api.ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("delete %s: %v, want NotFound", name, err)
	}
	if err := api.MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("delete mutating %s: %v, want NotFound", name, err)
	}
	none := admissionregistrationv1.SideEffectClassNone
	url := "https://127.0.0.1:1/x"
	shadow := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "shadow.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	_, err = api.ValidatingWebhookConfigurations().Create(ctx, shadow, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "reserved for static manifest-based configurations") {
		t.Errorf("create %s through the API: %v, want Invalid (reserved)", name, err)
	}
	t.Logf("through the API: list 0+0, get NotFound, delete NotFound, create %q: %v", name, err)
	_, err = client.CoreV1().Pods("static").Create(ctx, framework.Pod("after-delete", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), "violates policy require-environment") {
		t.Errorf("after the delete attempts, a Pod without label: %v, want denied", err)
	}
}

var hashLine = regexp.MustCompile(`plugin="ValidatingAdmissionWebhook"\} has hash="([^"]+)"`)

// checkReload adds a policy: the replicas reload it, the manifests are
// written again, and the running apiserver enforces it without a restart.
func checkReload(ctx context.Context, t *testing.T, client kubernetes.Interface, dir string, manifests func() (string, string), replicas []*replica, policies string) {
	if err := os.WriteFile(filepath.Join(policies, "team.yaml"), []byte(requireTeam), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		framework.WaitFor(t, 10*time.Second, r.addr+" reloads the policies", func() bool {
			return strings.Contains(r.log(), `"policies reloaded"`) && strings.Contains(r.log(), "require-team")
		})
		if !strings.Contains(r.log(), "need other webhooks than before") {
			t.Errorf("%s did not warn that the static manifests must be written again:\n%s", r.addr, tail(r.log()))
		}
	}
	cm := func() error {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "cm-"}}
		_, err := client.CoreV1().ConfigMaps("static").Create(ctx, c, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	if err := cm(); err != nil {
		t.Fatalf("a ConfigMap before the manifests name require-team: %v", err)
	}
	start := time.Now()
	_, written := manifests()
	m := hashLine.FindStringSubmatch(written)
	if m == nil {
		t.Fatalf("manifests --static printed no hash:\n%s", written)
	}
	framework.WaitFor(t, 90*time.Second, "the apiserver enforcing the added policy", func() bool {
		err := cm()
		return err != nil && strings.Contains(err.Error(), "violates policy require-team")
	})
	enforced := time.Since(start)
	framework.WaitFor(t, 90*time.Second, "the apiserver reporting the new hash", func() bool {
		l, err := staticmanifests.Loaded(ctx, client.Discovery().RESTClient())
		return err == nil && l[staticmanifests.ValidatingPlugin] == m[1]
	})
	t.Logf("policy added, manifests --static run again: enforced by the running apiserver %v after the command started; its metric showed the printed hash %s by %v",
		enforced.Round(time.Millisecond), m[1], time.Since(start).Round(time.Millisecond))
}

// checkRollingRestart restarts the replicas one after the other, twice,
// each time with a new serving certificate from the same CA, while Pods are created
// without pause: the static caBundle never changes, and no create fails.
func checkRollingRestart(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, pki string, roots *x509.CertPool, replicas []*replica) {
	load := framework.StartLoad(2, func(w, i int) error {
		p, err := client.CoreV1().Pods(ns).Create(ctx, framework.Pod(fmt.Sprintf("load-%d-%d", w, i), map[string]string{"environment": "dev"}, nil), metav1.CreateOptions{})
		if err == nil && framework.Count(p.Spec.Containers, framework.IsSidecar) != 1 {
			err = fmt.Errorf("pod %s came back with %d sidecars", p.Name, framework.Count(p.Spec.Containers, framework.IsSidecar))
		}
		return err
	})
	time.Sleep(time.Second)
	// Each replica twice, one after the other.
	for i, r := range append(append([]*replica{}, replicas...), replicas...) {
		renewed := filepath.Join(t.TempDir(), "renewed")
		for _, f := range []string{certs.CAFile, certs.CAKey} {
			data, err := os.ReadFile(filepath.Join(pki, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(renewed, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(renewed, f), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		// A new name forces a new serving certificate from the same CA.
		ss, err := certs.EnsureSelfSigned(renewed, []string{fmt.Sprintf("renewed-%d.tollgate.test", i)}, time.Now())
		if err != nil || ss.CreatedCA || !ss.CreatedCert {
			t.Fatalf("renewed certificate: %+v %v", ss, err)
		}
		stopped := time.Now()
		r.stop()
		r.useCertificate(t, renewed)
		r.start(t, roots)
		t.Logf("replica %s restarted with a renewed certificate in %v", r.addr, time.Since(stopped).Round(time.Millisecond))
		time.Sleep(time.Second)
	}
	attempts, failures, first := load.Stop()
	t.Logf("Pod creates during the rolling restart: %d attempted, %d failed", attempts, failures)
	if failures != 0 {
		t.Errorf("%d of %d creates failed; first: %s", failures, attempts, first)
	}
	if attempts < 20 {
		t.Errorf("only %d creates ran", attempts)
	}
}

// TestStaticFailClosed starts the apiserver with static manifests naming a
// tollgate that is not running yet, and without the feature gate flag (on
// by default from 1.37): the control plane starts, what the manifests
// leave out (excluded namespaces, kinds no policy matches) is admitted,
// Pods are refused from the first request; once tollgate runs, they are
// admitted without restarting the apiserver.
func TestStaticFailClosed(t *testing.T) {
	work, bin, pki, roots := setup(t)
	policies := filepath.Join(framework.RepoRoot(), "examples", "seed-policies.yaml")
	r := newReplica(t, bin, work, "a", pki, policies)
	dir := filepath.Join(work, "admission")
	out, err := exec.Command(bin, "manifests", "--static", dir, "--url", "https://"+r.addr,
		"--ca-file", filepath.Join(pki, certs.CAFile), "--config", policies, "--namespace", "tollgate-system").Output()
	if err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(work, "admission-configuration.yaml")
	if err := os.WriteFile(configFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	env, client, err := framework.StartControlPlane(map[string]string{"admission-control-config-file": configFile})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	t.Logf("apiserver ready %v after start, tollgate not running", time.Since(started).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, ns := range []string{"app", "kube-system"} { // and the ServiceAccount Pods need
		if err := framework.EnsureNamespace(ctx, client, ns, nil); err != nil {
			t.Fatalf("namespace %s, which no policy matches: %v", ns, err)
		}
	}
	if _, err := client.CoreV1().ConfigMaps("app").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a ConfigMap, which no policy matches: %v", err)
	}
	if _, err := client.CoreV1().Pods("kube-system").Create(ctx, framework.Pod("system", nil, nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("a Pod in kube-system, left out of every webhook: %v", err)
	}
	_, err = client.CoreV1().Pods("app").Create(ctx, framework.Pod("refused", map[string]string{"environment": "dev"}, nil), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), `failed calling webhook "require-environment.validate.tollgate.dev"`) {
		t.Fatalf("a valid Pod with tollgate down: %v, want refused (failurePolicy Fail)", err)
	}
	t.Logf("tollgate down: namespace, ConfigMap and kube-system Pod admitted; a valid Pod refused: %v", err)

	// With cluster access this time: a static replica still registers nothing.
	kubeconfig := filepath.Join(work, "admin.kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	r.args = append(r.args, "--kubeconfig", kubeconfig, "--background-audit=false")
	r.start(t, roots)
	defer r.stop()
	waited := framework.WaitFor(t, 30*time.Second, "a valid Pod admitted once tollgate runs", func() bool {
		_, err := client.CoreV1().Pods("app").Create(ctx, framework.Pod("admitted", map[string]string{"environment": "dev"}, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil
	})
	t.Logf("tollgate started: valid Pods admitted %v after it was ready, with no apiserver restart", waited.Round(time.Millisecond))
	time.Sleep(2 * time.Second) // a replica that registers does so at once
	api := client.AdmissionregistrationV1()
	m, err := api.MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := api.ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Items)+len(v.Items) != 0 || !strings.Contains(r.log(), "registration is static") {
		t.Errorf("a static replica with cluster access: %d mutating, %d validating configurations in the API; log:\n%s", len(m.Items), len(v.Items), tail(r.log()))
	}
}

// setup gives a test its directory, the tollgate binary, a CA with a
// serving certificate under pki (as an operator's CA would be) and a pool
// trusting it.
func setup(t *testing.T) (work, bin, pki string, roots *x509.CertPool) {
	t.Helper()
	work = t.TempDir()
	bin, err := framework.BuildTollgate(work)
	if err != nil {
		t.Fatal(err)
	}
	pki = filepath.Join(work, "pki")
	if _, err := certs.EnsureSelfSigned(pki, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, certs.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	return work, bin, pki, roots
}
