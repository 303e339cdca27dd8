//go:build e2e

package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/report"
)

// auditVAP and auditVAPBinding are given to tollgate audit in -c, then
// applied to the cluster: no key named by the param. The param is of a
// kind of the test's own (a CRD): the apiserver stops its param informer
// of a built-in kind for good once no binding names the kind, which the
// cleanup here would do to ConfigMap params for the tests that follow
// (kubernetes/kubernetes#130887).
const (
	auditVAP = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: auditvap-forbidden-key}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: auditvap.example.com/v1, kind: ForbiddenKey}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "!has(object.data) || !(params.key in object.data)"
    messageExpression: "'the key ' + params.key + ' is forbidden'"
`
	auditVAPBinding = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: auditvap-forbidden-key}
spec:
  policyName: auditvap-forbidden-key
  validationActions: [Deny]
  paramRef: {name: forbidden, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector: {matchLabels: {auditvap: "yes"}}
`
)

// TestAuditClusterPolicies: the same VAP, given in -c and then applied to
// the cluster (--cluster-policies), gives the same results, but for their
// origin; with both, tollgate's copy alone is audited; without the right
// to list VAPs, the audit says so and exits 2.
func TestAuditClusterPolicies(t *testing.T) {
	c := ctx(t)
	namespace(t, "auditvap-a", map[string]string{"auditvap": "yes"})
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "auditvap-a"}, Data: map[string]string{"password": "x"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "auditvap-a"}, Data: map[string]string{"port": "80"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "auditvap-a"}, Data: map[string]string{"token": "x"}},
	} {
		if _, err := cluster.client.CoreV1().ConfigMaps(cm.Namespace).Create(c, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	forbiddenKeyParam(t)
	reader := userWith(t, "auditvap-reader", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "namespaces"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"auditvap.example.com"}, Resources: []string{"forbiddenkeys"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"}, Verbs: []string{"get", "list"}},
	})
	policies := filepath.Join(t.TempDir(), "vap.yaml")
	if err := os.WriteFile(policies, []byte(auditVAP+"---\n"+auditVAPBinding), 0o644); err != nil {
		t.Fatal(err)
	}
	// results runs an audit and returns its results of the VAP, by ConfigMap.
	results := func(args ...string) (map[string]report.Result, string) {
		t.Helper()
		out, stderr, code := runTollgate(t, append([]string{"audit", "--kubeconfig", reader, "-o", "json"}, args...)...)
		if code != 1 {
			t.Fatalf("audit %v: exit %d, want 1 (something fails): %s", args, code, stderr)
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		got := map[string]report.Result{}
		for _, res := range r.Results {
			if ref := res.Resources[0]; ref.Namespace == "auditvap-a" && res.Policy == "auditvap-forbidden-key" {
				if _, dup := got[ref.Name]; dup {
					t.Errorf("audit %v: %s reported twice", args, ref.Name)
				}
				got[ref.Name] = res
			}
		}
		return got, stderr
	}
	fromConfig, _ := results("-c", policies)

	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := yaml.UnmarshalStrict([]byte(auditVAP), vap); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(auditVAPBinding), binding); err != nil {
		t.Fatal(err)
	}
	adm := cluster.client.AdmissionregistrationV1()
	if _, err := adm.ValidatingAdmissionPolicies().Create(c, vap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adm.ValidatingAdmissionPolicies().Delete(ctx(t), vap.Name, metav1.DeleteOptions{}) })
	if _, err := adm.ValidatingAdmissionPolicyBindings().Create(c, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = adm.ValidatingAdmissionPolicyBindings().Delete(ctx(t), binding.Name, metav1.DeleteOptions{})
	})
	fromCluster, _ := results("--cluster-policies")

	want := map[string]string{"db": "fail", "web": "pass", "api": "pass"}
	for _, got := range []map[string]report.Result{fromConfig, fromCluster} {
		outcomes := map[string]string{}
		for name, r := range got {
			outcomes[name] = string(r.Result)
		}
		if !reflect.DeepEqual(outcomes, want) {
			t.Errorf("outcomes %v, want %v", outcomes, want)
		}
	}
	// The paths agree: the same results, but for where the policy came from.
	for name, a := range fromConfig {
		b := fromCluster[name]
		if a.Properties["origin"] != "config" || b.Properties["origin"] != "cluster" {
			t.Errorf("%s: origins %q and %q, want config and cluster", name, a.Properties["origin"], b.Properties["origin"])
		}
		a.Properties, b.Properties = withoutOrigin(a.Properties), withoutOrigin(b.Properties)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: from -c %+v\nfrom the cluster %+v", name, a, b)
		}
	}
	if r := fromCluster["db"]; r.Properties["binding"] != "auditvap-forbidden-key" ||
		r.Message != "ValidatingAdmissionPolicy 'auditvap-forbidden-key' with binding 'auditvap-forbidden-key' denied request: the key password is forbidden" {
		t.Errorf("db: %+v", r)
	}

	// Both: tollgate's copy is audited, once; the cluster's is named as not.
	both, stderr := results("--cluster-policies", "-c", policies)
	for name, r := range both {
		if r.Properties["origin"] != "config" {
			t.Errorf("with both, %s: origin %q, want config", name, r.Properties["origin"])
		}
	}
	if len(both) != len(want) || !strings.Contains(stderr, `the cluster's ValidatingAdmissionPolicy "auditvap-forbidden-key" is not audited: -c has a policy of that name`) {
		t.Errorf("with both: %d results, stderr %q", len(both), stderr)
	}
	table, _, _ := runTollgate(t, "audit", "--kubeconfig", reader, "--cluster-policies")
	t.Logf("$ tollgate audit --cluster-policies\n%s", table)
	if !strings.Contains(table, "ConfigMap auditvap-a/db") {
		t.Errorf("table lacks the failing ConfigMap:\n%s", table)
	}

	// Without list on VAPs: exit 2, saying so.
	denied := readOnlyUser(t, "auditvap-nobody", []string{"configmaps", "namespaces"})
	if _, stderr, code := runTollgate(t, "audit", "--kubeconfig", denied, "--cluster-policies"); code != 2 || !strings.Contains(stderr, "forbidden") {
		t.Errorf("without list on VAPs: exit %d, %s", code, stderr)
	}
}

// forbiddenKeyParam creates the CRD of the param kind ForbiddenKey and its
// object forbidden, naming the key password.
func forbiddenKeyParam(t *testing.T) {
	t.Helper()
	c := ctx(t)
	dyn, err := dynamic.NewForConfig(cluster.restConfig)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "forbiddenkeys.auditvap.example.com"},
		"spec": map[string]any{
			"group": "auditvap.example.com", "scope": "Cluster",
			"names": map[string]any{"kind": "ForbiddenKey", "plural": "forbiddenkeys", "singular": "forbiddenkey", "listKind": "ForbiddenKeyList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(c, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	param := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "auditvap.example.com/v1", "kind": "ForbiddenKey",
		"metadata": map[string]any{"name": "forbidden"}, "key": "password",
	}}
	keys := schema.GroupVersionResource{Group: "auditvap.example.com", Version: "v1", Resource: "forbiddenkeys"}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err = dyn.Resource(keys).Create(c, param, metav1.CreateOptions{}); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ForbiddenKey: %v", err)
		}
	}
}

func withoutOrigin(p map[string]string) map[string]string {
	out := maps.Clone(p)
	delete(out, "origin")
	return out
}
