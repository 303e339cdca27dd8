//go:build e2e

package incluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// reportsResource is the default --reports-api's namespaced report.
var reportsResource = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}

const requireOwner = `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: require-owner}
spec:
  match:
    resources: [configmaps]
    operations: [CREATE, UPDATE]
    namespaceSelector: {matchLabels: {bgaudit: e2e}}
  failurePolicy: Fail
  validate:
    labels:
    - key: owner
`

// TestBackgroundAudit: objects that exist before a policy is loaded show
// in their namespace's report, and every change of an object, of the
// policies and of time (an exception's expiry) shows there within seconds.
// Then the leader is killed while a reloaded set is being audited: the new
// leader's reports hold every object exactly once.
func TestBackgroundAudit(t *testing.T) {
	ctx := context.Background()
	dyn := reportClient(t)
	const space = "e2e-bgaudit"
	if err := framework.EnsureNamespace(ctx, env.client, space, map[string]string{"bgaudit": "e2e"}); err != nil {
		t.Fatal(err)
	}
	cms := env.client.CoreV1().ConfigMaps(space)
	for _, cm := range []*corev1.ConfigMap{
		configMap("cm-0", nil), configMap("cm-1", nil), configMap("cm-2", nil), configMap("cm-3", nil),
		configMap("cm-ok", map[string]string{"owner": "team-a"}),
	} {
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = env.client.CoreV1().Namespaces().Delete(ctx, space, metav1.DeleteOptions{}) })
	wantNow := func(want map[string]string) func() bool {
		return func() bool {
			got, err := namespaceResults(ctx, dyn, space, "require-owner")
			return err == nil && fmt.Sprint(outcomes(got)) == fmt.Sprint(want)
		}
	}

	writePolicyFile(t, "bgaudit-require-owner.yaml", requireOwner)
	took := framework.WaitFor(t, 30*time.Second, "existing ConfigMaps reported", wantNow(map[string]string{
		"cm-0": "fail", "cm-1": "fail", "cm-2": "fail", "cm-3": "fail", "cm-ok": "pass",
	}))
	t.Logf("policy loaded: the existing objects in the report %s after the file was written", took.Round(10*time.Millisecond))

	cm0, err := cms.Get(ctx, "cm-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm0.Labels = map[string]string{"owner": "team-b"}
	if _, err := cms.Update(ctx, cm0, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	took = framework.WaitFor(t, 15*time.Second, "the fixed ConfigMap passing", wantNow(map[string]string{
		"cm-0": "pass", "cm-1": "fail", "cm-2": "fail", "cm-3": "fail", "cm-ok": "pass",
	}))
	t.Logf("object fixed: pass %s later", took.Round(10*time.Millisecond))

	if err := cms.Delete(ctx, "cm-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	took = framework.WaitFor(t, 15*time.Second, "the deleted ConfigMap gone from the report", wantNow(map[string]string{
		"cm-0": "pass", "cm-2": "fail", "cm-3": "fail", "cm-ok": "pass",
	}))
	t.Logf("object deleted: out of the report %s later", took.Round(10*time.Millisecond))

	cm2, err := cms.Get(ctx, "cm-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expiresAt := time.Now().Add(8 * time.Second).Truncate(time.Second).UTC()
	writePolicyFile(t, "bgaudit-exception.yaml", fmt.Sprintf(`apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: cm-2-grace}
spec:
  policies: [require-owner]
  match: {namespaces: [%s], names: [cm-2]}
  reason: the owner is being found (E2E-1)
  expiresAt: %q
`, space, expiresAt.Format(time.RFC3339)))
	took = framework.WaitFor(t, 7*time.Second, "the exempted ConfigMap skipped", wantNow(map[string]string{
		"cm-0": "pass", "cm-2": "skip", "cm-3": "fail", "cm-ok": "pass",
	}))
	t.Logf("exception loaded: skip %s later", took.Round(10*time.Millisecond))
	// What a user sees (docs/cli.md shows it).
	for _, args := range [][]string{{"get", "reports", "-n", space}, {"get", "reports", "-n", space, "-o", "yaml"}} {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", env.adminKubeconfig}, args...)...).CombinedOutput()
		t.Logf("$ kubectl %s (%v)\n%s", strings.Join(args, " "), err, out)
	}
	got, _ := namespaceResults(ctx, dyn, space, "require-owner")
	if r := got["cm-2"][0]; r.Properties["exception"] != "cm-2-grace" {
		t.Errorf("skip result of cm-2 names exception %q, want cm-2-grace (message %q)", r.Properties["exception"], r.Message)
	}
	framework.WaitFor(t, 30*time.Second, "the ConfigMap failing again once its exception expired", wantNow(map[string]string{
		"cm-0": "pass", "cm-2": "fail", "cm-3": "fail", "cm-ok": "pass",
	}))
	t.Logf("exception expired at %s: fail %s after it", expiresAt.Format(time.RFC3339), time.Since(expiresAt).Round(10*time.Millisecond))
	if time.Now().Before(expiresAt) {
		t.Error("fail again before the exception expired")
	}
	if now, err := cms.Get(ctx, "cm-2", metav1.GetOptions{}); err != nil || now.ResourceVersion != cm2.ResourceVersion {
		t.Errorf("cm-2 changed meanwhile (%v): the flip must come from the expiry alone", err)
	}

	t.Run("a kind tollgate may not read", func(t *testing.T) { unreadableKind(t, dyn) })
	t.Run("leader killed mid-scan", func(t *testing.T) { leaderKilledMidScan(t, dyn) })
}

// unreadableKind loads a policy on Secrets, which tollgate's ClusterRole
// does not let it list: the leader says so in its log and its metrics, and
// the other reports are still kept.
func unreadableKind(t *testing.T, dyn dynamic.Interface) {
	ctx := context.Background()
	leader := leaderReplica(t)
	path := filepath.Join(env.policies, "bgaudit-secrets.yaml")
	if err := os.WriteFile(path, []byte(`apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: secret-owner}
spec:
  match:
    resources: [secrets]
    operations: [CREATE, UPDATE]
    namespaceSelector: {matchLabels: {bgaudit: e2e}}
  validate:
    labels:
    - key: owner
`), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	series := `tollgate_background_audit_unreadable_resources{resource="secrets"}`
	framework.WaitFor(t, 30*time.Second, "the leader reporting secrets unreadable", func() bool {
		return metricLine(t, leader, series) == series+" 1"
	})
	data, _ := os.ReadFile(leader.log)
	if !strings.Contains(string(data), `"msg":"background audit: cannot list or watch a resource the policies match`) || !strings.Contains(string(data), `"resource":"secrets"`) {
		t.Error("no error logged naming secrets")
	}
	cm, err := env.client.CoreV1().ConfigMaps("e2e-bgaudit").Get(ctx, "cm-3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Labels = map[string]string{"owner": "team-c"}
	if _, err := env.client.CoreV1().ConfigMaps("e2e-bgaudit").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, 15*time.Second, "the other reports still kept", func() bool {
		got, err := namespaceResults(ctx, dyn, "e2e-bgaudit", "require-owner")
		return err == nil && outcomes(got)["cm-3"] == "pass"
	})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, 30*time.Second, "secrets no longer audited", func() bool {
		return metricLine(t, leader, series) == series+" 0"
	})
}

// leaderKilledMidScan loads a policy over 1,000 existing ConfigMaps in 4
// namespaces, SIGKILLs the leader as soon as the first of their reports
// appears, and checks that the next leader's reports hold every ConfigMap
// exactly once, with the right result.
func leaderKilledMidScan(t *testing.T, dyn dynamic.Interface) {
	ctx := context.Background()
	const spaces, perSpace = 4, 250
	want := map[string]map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, spaces)
	for i := range spaces {
		space := fmt.Sprintf("e2e-bgaudit-kill-%d", i)
		if err := framework.EnsureNamespace(ctx, env.client, space, map[string]string{"bgaudit-kill": "e2e"}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.client.CoreV1().Namespaces().Delete(ctx, space, metav1.DeleteOptions{}) })
		want[space] = map[string]string{}
		for j := range perSpace {
			name := fmt.Sprintf("cm-%03d", j)
			want[space][name] = "pass"
			if j%3 == 0 {
				want[space][name] = "fail"
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name, w := range want[space] {
				labels := map[string]string{"team": "a"}
				if w == "fail" {
					labels = nil
				}
				if _, err := env.client.CoreV1().ConfigMaps(space).Create(ctx, configMap(name, labels), metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	leader := leaderReplica(t)
	writePolicyFile(t, "bgaudit-require-team.yaml", `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: require-team}
spec:
  match:
    resources: [configmaps]
    operations: [CREATE, UPDATE]
    namespaceSelector: {matchLabels: {bgaudit-kill: e2e}}
  failurePolicy: Fail
  validate:
    labels:
    - key: team
`)
	written := func() int {
		n := 0
		for space := range want {
			if got, err := namespaceResults(ctx, dyn, space, "require-team"); err == nil && len(got) > 0 {
				n++
			}
		}
		return n
	}
	// Killed as soon as it has swapped in the new set: its evaluation of
	// the 1,000 ConfigMaps is under way.
	reloaded := `"msg":"policies reloaded","policies":["require-owner","require-team"`
	framework.WaitFor(t, 30*time.Second, "the leader reloading the new set", func() bool {
		data, _ := os.ReadFile(leader.log)
		return strings.Contains(string(data), reloaded)
	})
	kill(leader, syscall.SIGKILL)
	killed := time.Now()
	data, _ := os.ReadFile(leader.log)
	_, after, _ := strings.Cut(string(data), reloaded)
	scanned := strings.Contains(after, "background audit: every object evaluated")
	at := written()
	if err := removeEndpointSlice(leader); err != nil {
		t.Fatal(err)
	}
	t.Logf("leader replica %d killed (SIGKILL) after reloading; its evaluation of the new set finished first: %v; reports of it in %d of %d namespaces", leader.id, scanned, at, spaces)
	t.Cleanup(func() {
		if err := launch(leader); err != nil {
			t.Error(err)
			return
		}
		framework.WaitFor(t, 30*time.Second, "the killed replica ready again", func() bool { return ready(leader) })
		if err := putEndpointSlice(leader); err != nil {
			t.Error(err)
		}
	})
	var next *replica
	framework.WaitFor(t, 30*time.Second, "a new leader", func() bool {
		l, err := env.client.CoordinationV1().Leases(ns).Get(ctx, "tollgate-leader", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		for _, r := range env.replicas {
			if r != leader && strings.HasPrefix(*l.Spec.HolderIdentity, fmt.Sprintf("replica-%d_", r.id)) {
				next = r
			}
		}
		return next != nil
	})
	framework.WaitFor(t, 30*time.Second, "the new leader's first full evaluation", func() bool {
		l := metricLine(t, next, "tollgate_background_audit_scan_duration_seconds_count")
		return l != "" && !strings.HasSuffix(l, " 0")
	})
	var last string
	defer func() {
		if t.Failed() {
			t.Logf("last seen: %s", last)
		}
	}()
	framework.WaitFor(t, 60*time.Second, "the new leader's reports complete", func() bool {
		for space, w := range want {
			got, err := namespaceResults(ctx, dyn, space, "require-team")
			if err != nil {
				last = err.Error()
				return false
			}
			if o := outcomes(got); fmt.Sprint(o) != fmt.Sprint(w) {
				last = fmt.Sprintf("%s: %d objects reported", space, len(o))
				return false
			}
		}
		return true
	})
	t.Logf("new leader replica %d: every one of %d ConfigMaps exactly once, %s after the kill", next.id, spaces*perSpace, time.Since(killed).Round(10*time.Millisecond))
	// Exactly once, by uid too: no result left of an object under another identity.
	for space := range want {
		got, _ := namespaceResults(ctx, dyn, space, "require-team")
		uids := map[string]bool{}
		for name, rs := range got {
			if len(rs) != 1 || rs[0].Resources[0].UID == "" || uids[rs[0].Resources[0].UID] {
				t.Errorf("%s/%s: %d results, uid %q", space, name, len(rs), rs[0].Resources[0].UID)
			}
			uids[rs[0].Resources[0].UID] = true
		}
	}
	// The first namespace's report, written by the killed leader, is the
	// new leader's too: resumed, not lost.
	got, err := namespaceResults(ctx, dyn, "e2e-bgaudit", "require-owner")
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomes(got); fmt.Sprint(o) != fmt.Sprint(map[string]string{"cm-0": "pass", "cm-2": "fail", "cm-3": "pass", "cm-ok": "pass"}) {
		t.Errorf("e2e-bgaudit after the failover: %v", o)
	}
}
