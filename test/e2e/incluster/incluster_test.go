//go:build e2e

package incluster

import (
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
	"sync"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// The tests run in file order: each leaves the cluster as the next expects.
// That is why this file is over 400 lines: go test orders tests by file name,
// then by place in the file, so the sequence (deployed objects, RBAC,
// rotation under load, metrics, reload, rolling restarts, failover,
// uninstall) stays in one file where it can be read in order. Helpers that
// hold no test can move out; tests cannot without changing the order.

func TestDeployedObjects(t *testing.T) {
	ctx := context.Background()
	d, err := env.client.AppsV1().Deployments(ns).Get(ctx, "tollgate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	if *d.Spec.Replicas != 3 || spec.PriorityClassName != "system-cluster-critical" || len(spec.TopologySpreadConstraints) != 2 {
		t.Errorf("deployment: replicas %d, priority %q, %d spread constraints", *d.Spec.Replicas, spec.PriorityClassName, len(spec.TopologySpreadConstraints))
	}
	sc := c.SecurityContext
	if !*spec.SecurityContext.RunAsNonRoot || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || sc.Capabilities.Drop[0] != "ALL" ||
		spec.SecurityContext.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("security context: %+v %+v", spec.SecurityContext, sc)
	}
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.Resources.Limits.Memory().IsZero() {
		t.Error("probes or resources missing")
	}
	if _, err := env.client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "tollgate", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	cms, err := env.client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "tollgate-policies") && cm.Data["seed-policies.yaml"] == string(policy.DefaultsYAML()) {
			found = true
		}
	}
	if !found {
		t.Error("no tollgate-policies ConfigMap holding the seed policies")
	}
}

// TestRBACIsLeast asks the apiserver what the ServiceAccount the replicas
// run as may do: what they need, and nothing around it.
func TestRBACIsLeast(t *testing.T) {
	sa := "system:serviceaccount:" + ns + ":tollgate"
	tests := []struct {
		attr authorizationv1.ResourceAttributes
		want bool
	}{
		{authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "secrets", Name: "tollgate-certs"}, true},
		{authorizationv1.ResourceAttributes{Verb: "watch", Resource: "namespaces"}, true},
		{authorizationv1.ResourceAttributes{Verb: "patch", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations", Name: "tollgate"}, true},
		{authorizationv1.ResourceAttributes{Namespace: ns, Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: "tollgate-leader"}, true},
		{authorizationv1.ResourceAttributes{Verb: "watch", Resource: "configmaps"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, true},
		{authorizationv1.ResourceAttributes{Namespace: "default", Verb: "update", Group: "openreports.io", Resource: "reports", Name: "tollgate"}, true},
		{authorizationv1.ResourceAttributes{Verb: "delete", Group: "openreports.io", Resource: "clusterreports", Name: "tollgate-2"}, true},
		// The background audit reads the kinds the policies match, never Secrets, and writes none of them.
		{authorizationv1.ResourceAttributes{Verb: "watch", Resource: "pods"}, true},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: "apps", Resource: "deployments"}, true},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}, false},
		// and the cluster's own ValidatingAdmissionPolicies, never writing them.
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}, true},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies", Name: "x"}, false},
		{authorizationv1.ResourceAttributes{Verb: "delete", Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings", Name: "x"}, false},
		{authorizationv1.ResourceAttributes{Namespace: "default", Verb: "patch", Group: "apps", Resource: "deployments", Name: "x"}, false},
		{authorizationv1.ResourceAttributes{Namespace: "default", Verb: "delete", Resource: "pods", Name: "x"}, false},
		{authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "secrets", Name: "other"}, false},
		{authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Resource: "secrets"}, false},
		{authorizationv1.ResourceAttributes{Namespace: "default", Verb: "get", Resource: "secrets", Name: "tollgate-certs"}, false},
		{authorizationv1.ResourceAttributes{Verb: "patch", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations", Name: "someone-else"}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, false},
		{authorizationv1.ResourceAttributes{Namespace: ns, Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: "kube-controller-manager"}, false},
		{authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Resource: "pods"}, false},
		{authorizationv1.ResourceAttributes{Verb: "update", Resource: "namespaces", Name: "default"}, false},
		{authorizationv1.ResourceAttributes{Namespace: "default", Verb: "update", Resource: "configmaps", Name: "x"}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews", Namespace: "default"}, false},
		{authorizationv1.ResourceAttributes{Namespace: "default", Verb: "update", Group: "wgpolicyk8s.io", Resource: "policyreports", Name: "tollgate"}, false},
	}
	for _, tt := range tests {
		a := tt.attr
		r, err := env.client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}, ResourceAttributes: &a},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed != tt.want {
			t.Errorf("%s %s/%s %q in %q: allowed=%v, want %v", a.Verb, a.Group, a.Resource, a.Name, a.Namespace, r.Status.Allowed, tt.want)
		}
	}
}

// TestRotationUnderLoad creates Pods through the Service while the leader
// renews the serving certificate and rotates the CA: nothing may fail.
func TestRotationUnderLoad(t *testing.T) {
	ctx := context.Background()
	if err := framework.EnsureNamespace(ctx, env.client, "e2e-load", map[string]string{"sidecar-injection": "enabled"}); err != nil {
		t.Fatal(err)
	}
	serving, signing := map[string]bool{}, map[string]bool{}
	maxBundle := 0
	stop := make(chan struct{})
	var watchers sync.WaitGroup
	watchers.Add(1)
	go func() { // the Secret's history
		defer watchers.Done()
		for {
			if sec, err := env.client.CoreV1().Secrets(ns).Get(ctx, "tollgate-certs", metav1.GetOptions{}); err == nil {
				if c := certs.ParseBundle(sec.Data[certs.SecretTLSCert]); len(c) == 1 {
					serving[c[0].SerialNumber.String()] = true
				}
				if c := certs.ParseBundle(sec.Data[certs.SecretCACert]); len(c) == 1 {
					signing[c[0].SerialNumber.String()] = true
				}
				maxBundle = max(maxBundle, len(certs.ParseBundle(sec.Data[certs.SecretCABundle])))
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	load := framework.StartLoad(2, func(w, i int) error { return createOne(ctx, fmt.Sprintf("w%d-%d", w, i), i%5 == 0) })
	start := time.Now()
	deadline := start.Add(90 * time.Second)
	for time.Now().Before(deadline) && (len(signing) < 2 || len(serving) < 4) {
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // load after the last change, too
	attempts, failures, first := load.Stop()
	close(stop)
	watchers.Wait()
	t.Logf("%s of load: %d creates, %d failed; serving certificates seen %d, signing CAs %d, largest CA bundle %d",
		time.Since(start).Round(time.Second), attempts, failures, len(serving), len(signing), maxBundle)
	if len(signing) < 2 || maxBundle < 2 {
		t.Errorf("no CA rotation seen in 90s (signing CAs %d, largest bundle %d)", len(signing), maxBundle)
	}
	if len(serving) < 4 {
		t.Errorf("only %d serving certificates seen", len(serving))
	}
	if failures != 0 {
		t.Errorf("%d of %d creates failed; first: %s", failures, attempts, first)
	}
	if attempts < 100 {
		t.Errorf("only %d creates: not a load", attempts)
	}
	assertReplicasServeSecret(t)
}

// createOne creates a Pod that must be injected, or (bad) one that must be
// denied; any other outcome is an error.
func createOne(ctx context.Context, name string, bad bool) error {
	labels := map[string]string{"environment": "dev"}
	if bad {
		labels = map[string]string{"environment": "qa"}
	}
	p, err := env.client.CoreV1().Pods("e2e-load").Create(ctx, framework.Pod(name, labels, nil), metav1.CreateOptions{})
	if bad {
		if err == nil || !strings.Contains(err.Error(), `got "qa"`) {
			return fmt.Errorf("pod %s: want a denial, got %v", name, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if framework.Count(p.Spec.Containers, framework.IsSidecar) != 1 {
		return fmt.Errorf("pod %s has no sidecar", name)
	}
	return nil
}

// assertReplicasServeSecret checks every live replica serves the Secret's
// certificate, verified for the Service's name against the Secret's bundle.
func assertReplicasServeSecret(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for _, r := range env.replicas {
		if !alive(r) {
			continue
		}
		for {
			sec, err := env.client.CoreV1().Secrets(ns).Get(ctx, "tollgate-certs", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := certs.ParseBundle(sec.Data[certs.SecretTLSCert])[0].SerialNumber.String()
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(sec.Data[certs.SecretCABundle])
			conn, err := tls.Dial("tcp", net.JoinHostPort(env.hostIP, fmt.Sprint(r.port)), &tls.Config{RootCAs: pool, ServerName: serviceName + "." + ns + ".svc"})
			got := ""
			if err == nil {
				got = conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
				conn.Close()
			}
			if got == want {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("replica %d serves %q (%v), the Secret holds %s", r.id, got, err, want)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func TestMetrics(t *testing.T) {
	body := metricsPage(t, env.replicas[0])
	for _, want := range []string{
		`tollgate_reviews_total{code="200",decision="patched",path="/mutate/nginx-sidecar"}`,
		`tollgate_reviews_total{code="403",decision="denied",path="/validate/require-environment"}`,
		`tollgate_review_duration_seconds_bucket{path="/validate/require-environment",le="0.0001"}`,
		`tollgate_injections_total{policy="nginx-sidecar"}`,
		`tollgate_certificate_expiry_timestamp_seconds{certificate="serving"}`,
		// Not "1": TestBackgroundAudit, before, reloads policies.
		`tollgate_policy_loads_total{result="success"} `,
		"tollgate_background_audit_scan_duration_seconds_count ",
		"tollgate_leader ",
		"tollgate_panics_total 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestPolicyReload adds a CEL policy to the replicas' policy directory while
// Pods are created: every replica picks it up without restart, the leader
// registers its webhook, and nothing fails. A broken file is then refused
// while the previous set keeps serving and /readyz stays ready.
func TestPolicyReload(t *testing.T) {
	ctx := context.Background()
	load := framework.StartLoad(1, func(_, i int) error { return createOne(ctx, fmt.Sprintf("reload-%d", i), i%5 == 0) })
	extra := filepath.Join(env.policies, "no-latest.yaml")
	loadsBefore := map[*replica]string{}
	for _, r := range env.replicas {
		if alive(r) {
			loadsBefore[r] = metricLine(t, r, `tollgate_policy_loads_total{result="success"}`)
		}
	}
	policyDoc := `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: no-latest}
spec:
  match: {resources: [pods], operations: [CREATE]}
  validate:
    expressions:
    - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
      message: "pin your images"
`
	if err := os.WriteFile(extra, []byte(policyDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	latest := framework.Pod("latest", map[string]string{"environment": "dev"}, nil)
	latest.Spec.Containers[0].Image = "nginx:latest"
	took := framework.WaitFor(t, 30*time.Second, "the new policy enforced", func() bool {
		_, err := env.client.CoreV1().Pods("e2e-load").Create(ctx, latest, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "violates policy no-latest: pin your images")
	})
	t.Logf("new policy enforced through the apiserver %s after the file was written", took.Round(10*time.Millisecond))
	// The apiserver reaches whichever replica it picks: every one must
	// have loaded the new set before it is broken, or a replica that had
	// not yet loaded it would be right to keep serving the set before it.
	for r, before := range loadsBefore {
		framework.WaitFor(t, 30*time.Second, fmt.Sprintf("replica %d reloaded", r.id), func() bool {
			return !alive(r) || metricLine(t, r, `tollgate_policy_loads_total{result="success"}`) != before
		})
	}
	vwc, err := env.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "tollgate", metav1.GetOptions{})
	if err != nil || len(vwc.Webhooks) != 2 {
		t.Errorf("the leader did not register the new policy's webhook: %v", err)
	}

	if err := os.WriteFile(extra, []byte(strings.Replace(policyDoc, "object.spec.containers.all(", "object.spec.containers.all(c, ", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	for _, r := range env.replicas {
		if !alive(r) {
			continue
		}
		if got := metricLine(t, r, `tollgate_policy_loads_total{result="failure"}`); got != `tollgate_policy_loads_total{result="failure"} 1` {
			t.Errorf("replica %d did not count the refused reload", r.id)
		}
	}
	if _, err := env.client.CoreV1().Pods("e2e-load").Create(ctx, latest, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil || !strings.Contains(err.Error(), "pin your images") {
		t.Errorf("after a broken reload the previous set must keep serving: %v", err)
	}
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, 30*time.Second, "the removed policy no longer enforced", func() bool {
		_, err := env.client.CoreV1().Pods("e2e-load").Create(ctx, latest, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil
	})
	attempts, failures, first := load.Stop()
	t.Logf("%s of reloads: %d creates, %d failed", time.Since(start).Round(time.Second), attempts, failures)
	if failures != 0 {
		t.Errorf("%d creates failed during reloads; first: %s", failures, first)
	}
}

// TestRollingRestarts restarts replicas one after another while Pods are
// created, as a rollout does: the endpoint goes first (what the
// EndpointSlice controller does when a Pod terminates), then SIGTERM; the
// replica drains, exits, starts again and rejoins. Nothing may fail.
func TestRollingRestarts(t *testing.T) {
	ctx := context.Background()
	if err := framework.EnsureNamespace(ctx, env.client, "e2e-load", map[string]string{"sidecar-injection": "enabled"}); err != nil {
		t.Fatal(err)
	}
	load := framework.StartLoad(2, func(w, i int) error { return createOne(ctx, fmt.Sprintf("roll-%d-%d", w, i), i%5 == 0) })
	start := time.Now()
	restarts := 0
	for round := range 4 {
		r := env.replicas[round%len(env.replicas)]
		if !alive(r) {
			continue
		}
		if err := removeEndpointSlice(r); err != nil {
			t.Fatal(err)
		}
		kill(r, syscall.SIGTERM)
		if err := launch(r); err != nil {
			t.Fatal(err)
		}
		framework.WaitFor(t, 30*time.Second, "the replica ready", func() bool { return ready(r) })
		if err := putEndpointSlice(r); err != nil {
			t.Fatal(err)
		}
		restarts++
		time.Sleep(time.Second)
	}
	attempts, failures, first := load.Stop()
	t.Logf("%d rolling restarts in %s: %d creates, %d failed", restarts, time.Since(start).Round(time.Second), attempts, failures)
	if restarts < 3 {
		t.Errorf("only %d restarts", restarts)
	}
	if failures != 0 {
		t.Errorf("%d of %d creates failed; first: %s", failures, attempts, first)
	}
}

// ready is what a kubelet's readiness probe sees (it does not verify the
// certificate).
func ready(r *replica) bool { return readiness(r) == "ok" }

// TestLeaderFailover kills the leader as a lost node would (no goodbye):
// another replica must take the Lease, and then repair a configuration
// deleted and one edited by hand.
func TestLeaderFailover(t *testing.T) {
	ctx := context.Background()
	lease, err := env.client.CoordinationV1().Leases(ns).Get(ctx, "tollgate-leader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := *lease.Spec.HolderIdentity
	var leader *replica
	for _, r := range env.replicas {
		if strings.HasPrefix(old, fmt.Sprintf("replica-%d_", r.id)) {
			leader = r
		}
	}
	if leader == nil {
		t.Fatalf("lease held by %q, no replica of ours", old)
	}
	killed := time.Now()
	kill(leader, syscall.SIGKILL)
	if err := removeEndpointSlice(leader); err != nil {
		t.Fatal(err)
	}
	var holder string
	for time.Since(killed) < 30*time.Second {
		l, err := env.client.CoordinationV1().Leases(ns).Get(ctx, "tollgate-leader", metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != old && *l.Spec.HolderIdentity != "" {
			holder = *l.Spec.HolderIdentity
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	takeover := time.Since(killed)
	if holder == "" {
		t.Fatalf("no new leader 30s after the leader was killed")
	}
	t.Logf("leader %s killed; %s took over after %s (lease duration 4s)", old, holder, takeover.Round(10*time.Millisecond))

	vwc := env.client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	before, err := vwc.Get(ctx, "tollgate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := vwc.Delete(ctx, "tollgate", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	back := framework.WaitFor(t, 20*time.Second, "the configuration recreated", func() bool {
		c, err := vwc.Get(ctx, "tollgate", metav1.GetOptions{})
		return err == nil && c.UID != before.UID // recreated, not the one deleted
	})
	t.Logf("ValidatingWebhookConfiguration deleted by hand: back after %s", back.Round(time.Millisecond))

	cfg, err := vwc.Get(ctx, "tollgate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ignore := admissionregistrationv1.Ignore
	cfg.Webhooks[0].FailurePolicy = &ignore
	if _, err := vwc.Update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	repaired := framework.WaitFor(t, 20*time.Second, "the failurePolicy repaired", func() bool {
		c, err := vwc.Get(ctx, "tollgate", metav1.GetOptions{})
		return err == nil && string(*c.Webhooks[0].FailurePolicy) == "Fail"
	})
	t.Logf("failurePolicy edited by hand: repaired after %s", repaired.Round(10*time.Millisecond))
	if err := waitForWebhooks(30 * time.Second); err != nil {
		t.Error(err)
	}
}

func TestUninstall(t *testing.T) {
	stopAll()
	out, err := runTollgate("uninstall", "--kubeconfig", env.adminKubeconfig)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "deleted MutatingWebhookConfiguration/tollgate") || !strings.Contains(out, "deleted ValidatingWebhookConfiguration/tollgate") {
		t.Errorf("uninstall said:\n%s", out)
	}
	_, err = env.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), "tollgate", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("configuration still there: %v", err)
	}
}

func runTollgate(args ...string) (string, error) {
	out, err := exec.Command(env.bin, args...).CombinedOutput()
	return string(out), err
}

// TestCertManagerOverlayRenders builds deploy/cert-manager. cert-manager
// itself is not available here, so the overlay is checked for shape only.
func TestCertManagerOverlayRenders(t *testing.T) {
	out, err := exec.Command("kubectl", "kustomize", framework.RepoRoot()+"/deploy/cert-manager").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"--cert-source=cert-manager", "--inject-ca-from=tollgate-system/tollgate-serving", "secretName: tollgate-serving", "kind: Certificate", "- tollgate.tollgate-system.svc"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("overlay lacks %q", want)
		}
	}
}

// metricLine is the line of a replica's metrics that starts with series,
// or "" when there is none.
func metricLine(t *testing.T, r *replica, series string) string {
	t.Helper()
	for _, line := range strings.Split(metricsPage(t, r), "\n") {
		if strings.HasPrefix(line, series+" ") {
			return line
		}
	}
	return ""
}

// metricsPage is a replica's /metrics page.
func metricsPage(t *testing.T, r *replica) string {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", r.metrics))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
