//go:build e2e

package incluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// clusterVAP is applied to the cluster, not to tollgate's config: no key
// named by its param ConfigMap in ConfigMaps, in the namespaces its
// binding selects.
const clusterVAP = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: e2e-forbidden-key}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "!has(object.data) || !(params.data.forbidden in object.data)"
    messageExpression: "'the key ' + params.data.forbidden + ' is forbidden'"
`

const clusterVAPBinding = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: e2e-forbidden-key-teams}
spec:
  policyName: e2e-forbidden-key
  validationActions: [Deny]
  paramRef: {name: forbidden, namespace: e2e-vap-params, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector:
      matchExpressions: [{key: vap-e2e, operator: In, values: [a, b]}]
`

// TestBackgroundAuditClusterVAP: a ValidatingAdmissionPolicy and binding
// applied to the cluster, with violating ConfigMaps stored before them,
// show in their namespaces' reports within seconds, named with their
// binding and origin; the binding narrowed, removed and restored, the
// param edited and the VAP deleted each show there too.
func TestBackgroundAuditClusterVAP(t *testing.T) {
	ctx := context.Background()
	dyn := reportClient(t)
	spaces := map[string]string{"e2e-vap-a": "a", "e2e-vap-b": "b", "e2e-vap-params": "params"}
	for space, team := range spaces {
		if err := framework.EnsureNamespace(ctx, env.client, space, map[string]string{"vap-e2e": team}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.client.CoreV1().Namespaces().Delete(ctx, space, metav1.DeleteOptions{}) })
	}
	data := func(keys ...string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{Data: map[string]string{}}
		for _, k := range keys {
			cm.Data[k] = "x"
		}
		return cm
	}
	stored := map[string]map[string]*corev1.ConfigMap{
		"e2e-vap-a": {"db": data("password"), "web": data("port"), "api": data("token")},
		"e2e-vap-b": {"cache": data("password"), "queue": data("port")},
	}
	for space, cms := range stored {
		for name, cm := range cms {
			cm.Name = name
			if _, err := env.client.CoreV1().ConfigMaps(space).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	param := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "forbidden"}, Data: map[string]string{"forbidden": "password"}}
	if _, err := env.client.CoreV1().ConfigMaps("e2e-vap-params").Create(ctx, param, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	adm := env.client.AdmissionregistrationV1()
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := yaml.UnmarshalStrict([]byte(clusterVAP), vap); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(clusterVAPBinding), binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = adm.ValidatingAdmissionPolicyBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
		_ = adm.ValidatingAdmissionPolicies().Delete(ctx, vap.Name, metav1.DeleteOptions{})
	})
	const policy = "e2e-forbidden-key"
	// want waits until both namespaces' reports hold exactly these
	// results of the cluster's VAP, ConfigMap by ConfigMap.
	want := func(what string, timeout time.Duration, a, b map[string]string) time.Duration {
		t.Helper()
		var last string
		defer func() {
			if t.Failed() {
				t.Logf("%s: last seen %s", what, last)
			}
		}()
		took := framework.WaitFor(t, timeout, what, func() bool {
			for space, w := range map[string]map[string]string{"e2e-vap-a": a, "e2e-vap-b": b} {
				got, err := namespaceResults(ctx, dyn, space, policy)
				if err != nil {
					last = err.Error()
					return false
				}
				if fmt.Sprint(outcomes(got)) != fmt.Sprint(w) {
					last = fmt.Sprintf("%s: %v", space, outcomes(got))
					return false
				}
			}
			return true
		})
		t.Logf("%s: %s", what, took.Round(10*time.Millisecond))
		return took
	}

	// The leader running its audit already, so that what follows times
	// the VAP's way into the reports, not the leader's start.
	framework.WaitFor(t, 30*time.Second, "a leader", func() bool {
		l, err := env.client.CoordinationV1().Leases(ns).Get(ctx, "tollgate-leader", metav1.GetOptions{})
		return err == nil && framework.Deref(l.Spec.HolderIdentity) != ""
	})
	leader := leaderReplica(t)
	framework.WaitFor(t, 30*time.Second, "the leader's first full evaluation", func() bool {
		l := metricLine(t, leader, "tollgate_background_audit_scan_duration_seconds_count")
		return l != "" && !strings.HasSuffix(l, " 0")
	})
	start := time.Now()
	if _, err := adm.ValidatingAdmissionPolicies().Create(ctx, vap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("the VAP and binding applied: the stored ConfigMaps reported", 15*time.Second,
		map[string]string{"db": "fail", "web": "pass", "api": "pass"}, map[string]string{"cache": "fail", "queue": "pass"})
	t.Logf("applied to reported: %s", time.Since(start).Round(10*time.Millisecond))
	got, err := namespaceResults(ctx, dyn, "e2e-vap-a", policy)
	if err != nil {
		t.Fatal(err)
	}
	if r := got["db"][0]; r.Properties["origin"] != "cluster" || r.Properties["binding"] != "e2e-forbidden-key-teams" ||
		r.Message != "ValidatingAdmissionPolicy 'e2e-forbidden-key' with binding 'e2e-forbidden-key-teams' denied request: the key password is forbidden" {
		t.Errorf("result of db: %+v", r)
	}
	// What a user sees (docs/deploy.md shows it).
	for _, args := range [][]string{{"get", "reports", "-n", "e2e-vap-a"}, {"get", "reports", "-n", "e2e-vap-a", "-o", "yaml"}} {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", env.adminKubeconfig}, args...)...).CombinedOutput()
		t.Logf("$ kubectl %s (%v)\n%s", strings.Join(args, " "), err, out)
	}

	// The paths agree: the same VAP and binding in tollgate's config give
	// the same results but for their origin. The config's copy shadows the
	// cluster's while both exist: each object has one result of the VAP.
	fromCluster := vapResults(ctx, t, dyn, policy)
	writePolicyFile(t, "e2e-forbidden-key.yaml", clusterVAP+"---\n"+clusterVAPBinding)
	took := framework.WaitFor(t, 15*time.Second, "the config's copy reported instead", func() bool {
		return sameOrigin(vapResults(ctx, t, dyn, policy), "config", len(fromCluster))
	})
	t.Logf("the same VAP written to the config: its results, origin config, %s later", took.Round(10*time.Millisecond))
	fromConfig := vapResults(ctx, t, dyn, policy)
	for key, c := range fromCluster {
		f := fromConfig[key]
		c.Properties, f.Properties = withoutOrigin(c.Properties), withoutOrigin(f.Properties)
		if fmt.Sprint(c) != fmt.Sprint(f) {
			t.Errorf("%s: from the cluster %+v\nfrom the config %+v", key, c, f)
		}
	}
	if err := os.Remove(filepath.Join(env.policies, "e2e-forbidden-key.yaml")); err != nil {
		t.Fatal(err)
	}
	took = framework.WaitFor(t, 15*time.Second, "the cluster's VAP reported again", func() bool {
		return sameOrigin(vapResults(ctx, t, dyn, policy), "cluster", len(fromCluster))
	})
	t.Logf("the config's copy removed: the cluster's results again %s later", took.Round(10*time.Millisecond))

	// The binding narrowed to team a: b's results gone.
	b, err := adm.ValidatingAdmissionPolicyBindings().Get(ctx, binding.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Spec.MatchResources.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"vap-e2e": "a"}}
	if _, err := adm.ValidatingAdmissionPolicyBindings().Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("the binding narrowed to team a", 15*time.Second,
		map[string]string{"db": "fail", "web": "pass", "api": "pass"}, map[string]string{})

	// The param edited: another key forbidden.
	p, err := env.client.CoreV1().ConfigMaps("e2e-vap-params").Get(ctx, "forbidden", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Data["forbidden"] = "token"
	if _, err := env.client.CoreV1().ConfigMaps("e2e-vap-params").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("the param edited", 15*time.Second,
		map[string]string{"db": "pass", "web": "pass", "api": "fail"}, map[string]string{})
	got, _ = namespaceResults(ctx, dyn, "e2e-vap-a", policy)
	if m := got["api"][0].Message; !strings.HasSuffix(m, "the key token is forbidden") {
		t.Errorf("result of api after the param changed: %q", m)
	}

	// The VAP edited: a port key refused too.
	v, err := adm.ValidatingAdmissionPolicies().Get(ctx, vap.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v.Spec.Validations[0].Expression = "!has(object.data) || !(params.data.forbidden in object.data || 'port' in object.data)"
	if _, err := adm.ValidatingAdmissionPolicies().Update(ctx, v, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("the VAP edited", 15*time.Second,
		map[string]string{"db": "pass", "web": "fail", "api": "fail"}, map[string]string{})

	// Unbound, bound again, then the VAP deleted. (Once no binding names
	// ConfigMap params, this apiserver's own ConfigMap param informer is
	// stopped for good, kubernetes/kubernetes#130887: no later test here
	// has the apiserver enforce ConfigMap params; tollgate reads its own.)
	if err := adm.ValidatingAdmissionPolicyBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("the binding deleted", 15*time.Second, map[string]string{}, map[string]string{})
	binding.ResourceVersion = ""
	if _, err := adm.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("bound again, to both teams", 15*time.Second,
		map[string]string{"db": "pass", "web": "fail", "api": "fail"}, map[string]string{"cache": "pass", "queue": "fail"})
	if err := adm.ValidatingAdmissionPolicies().Delete(ctx, vap.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("the VAP deleted", 15*time.Second, map[string]string{}, map[string]string{})
}

// vapResults are the VAP's results in both namespaces, by namespace/name;
// an object with more than one fails the test.
func vapResults(ctx context.Context, t *testing.T, dyn dynamic.Interface, policy string) map[string]reportResult {
	t.Helper()
	out := map[string]reportResult{}
	for _, space := range []string{"e2e-vap-a", "e2e-vap-b"} {
		got, err := namespaceResults(ctx, dyn, space, policy)
		if err != nil {
			t.Fatal(err)
		}
		for name, rs := range got {
			if len(rs) != 1 {
				t.Fatalf("%s/%s: %d results of %s, want one", space, name, len(rs), policy)
			}
			out[space+"/"+name] = rs[0]
		}
	}
	return out
}

// sameOrigin: n results, each of that origin.
func sameOrigin(results map[string]reportResult, origin string, n int) bool {
	for _, r := range results {
		if r.Properties["origin"] != origin {
			return false
		}
	}
	return len(results) == n
}

func withoutOrigin(p map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range p {
		if k != "origin" {
			out[k] = v
		}
	}
	return out
}
