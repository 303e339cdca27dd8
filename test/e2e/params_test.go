//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

var (
	crdGVR   = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	limitGVR = schema.GroupVersionResource{Group: "limits.example.com", Version: "v1", Resource: "replicalimits"}
)

// TestVAPParamsDifferential is TestVAPDifferential for parameterized
// policies and the authorizer variable: ConfigMap params by name, in the
// request's namespace and by selector, a custom resource param kind whose
// CRD the test creates, parameterNotFoundAction Allow and Deny, a paramRef
// on a policy without paramKind, authorizer checks for two users, and a
// param edited mid-test. Every decision, code, message and warning must be
// kube-apiserver's.
func TestVAPParamsDifferential(t *testing.T) {
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(cluster.restConfig)
	setUpParams(ctx, t, dyn)
	template, err := os.ReadFile("testdata/vap-params-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for ns, label := range map[string]string{"params-native": "native", "params-tollgate": "tollgate"} {
		if err := framework.EnsureNamespace(ctx, cluster.client, ns, map[string]string{"differential-params": label}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "local-limit", Namespace: ns}, Data: map[string]string{"max": "2"}}
		if _, err := cluster.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	applyNative(t, bytes.ReplaceAll(template, []byte("PLACEHOLDER"), []byte("native")))
	startTollgateWith(t, "tollgate-params", paramsGone, bytes.ReplaceAll(template, []byte("PLACEHOLDER"), []byte("tollgate")))

	w := &warnings{}
	clients := map[string]kubernetes.Interface{}
	for _, user := range []string{"alice", "bob"} {
		cfg := rest.CopyConfig(cluster.restConfig)
		cfg.WarningHandler = w
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		clients[user] = kubernetes.NewForConfigOrDie(cfg)
	}
	// Every policy in effect on both sides first (the apiserver loads
	// policies, bindings and param informers asynchronously).
	probes := map[string]string{"max-9": "is more than 3", "local-3": "own limit", "names-evil": "is forbidden by forbidden-a",
		"custom-0": "at least 1", "absent-deny-1": "no params found", "ignored-ref-7": "seven", "approve-bob": "may not approve"}
	corpus := paramsCorpus()
	for _, ns := range []string{"params-native", "params-tollgate"} {
		for _, c := range corpus {
			want, ok := probes[c.obj.Name]
			if !ok {
				continue
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				a := createIn(ctx, t, clients[c.user], w, ns, c.obj)
				if strings.Contains(a.message+strings.Join(a.warnings, " "), want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: policy for %s not in effect after 30s: %+v", ns, c.obj.Name, a)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	denied, warned := compareParams(ctx, t, clients, w, corpus)

	// A param edited in the cluster takes effect on both sides, without a restart.
	limits, err := cluster.client.CoreV1().ConfigMaps("params-config").Get(ctx, "limits", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	limits.Data["max"] = "5"
	if _, err := cluster.client.CoreV1().ConfigMaps("params-config").Update(ctx, limits, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"params-native", "params-tollgate"} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			a := createIn(ctx, t, clients["alice"], w, ns, paramsDeployment("max-9", "max", 9, nil))
			if strings.Contains(a.message, "is more than 5") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: edited param not in effect after 30s: %+v", ns, a)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	var edited []paramsCase
	for _, c := range corpus {
		if c.obj.Labels["case"] == "max" {
			edited = append(edited, c)
		}
	}
	d2, w2 := compareParams(ctx, t, clients, w, edited)
	verdict := "every decision, code, message and warning equal"
	if t.Failed() {
		verdict = "DIFFERENCES above"
	}
	t.Logf("params differential corpus: %d requests against 8 policies (6 parameterized, 1 binding paramRef without paramKind, 1 authorizer), then %d again after editing a param: %d denied, %d warned; %s",
		len(corpus), len(edited), denied+d2, warned+w2, verdict)
	if len(corpus) < 30 || denied < 10 || warned < 2 {
		t.Errorf("the corpus is too weak: %d requests, %d denied, %d warned", len(corpus), denied, warned)
	}
}

type paramsCase struct {
	user string
	obj  *appsv1.Deployment
}

func paramsDeployment(name, c string, replicas int32, labels map[string]string) *appsv1.Deployment {
	d := deployment(name, replicas)
	d.Labels = map[string]string{"case": c}
	for k, v := range labels {
		d.Labels[k] = v
	}
	return d
}

func paramsCorpus() []paramsCase {
	var out []paramsCase
	add := func(user string, d *appsv1.Deployment) { out = append(out, paramsCase{user: user, obj: d}) }
	for r := int32(0); r <= 9; r += 3 {
		add("alice", paramsDeployment(fmt.Sprintf("max-%d", r), "max", r, nil))
	}
	add("alice", paramsDeployment("max-4", "max", 4, nil))
	for r := int32(1); r <= 4; r++ {
		add("alice", paramsDeployment(fmt.Sprintf("local-%d", r), "local", r, nil))
	}
	for _, n := range []string{"evil", "wicked", "kind", "nice"} {
		add("alice", paramsDeployment("names-"+n, "names", 1, nil))
	}
	for r := int32(0); r <= 2; r++ {
		add("alice", paramsDeployment(fmt.Sprintf("custom-%d", r), "custom", r, nil))
	}
	for r := int32(1); r <= 2; r++ {
		add("alice", paramsDeployment(fmt.Sprintf("absent-allow-%d", r), "absent-allow", r, nil))
		add("alice", paramsDeployment(fmt.Sprintf("absent-deny-%d", r), "absent-deny", r, nil))
	}
	for _, r := range []int32{1, 7} {
		add("alice", paramsDeployment(fmt.Sprintf("ignored-ref-%d", r), "ignored-ref", r, nil))
	}
	for _, user := range []string{"alice", "bob"} {
		add(user, paramsDeployment("approve-"+user, "approve", 1, map[string]string{"approved": "yes"}))
		add(user, paramsDeployment("plain-"+user, "approve", 1, nil))
		add(user, paramsDeployment("approve-also-"+user, "approve", 2, map[string]string{"approved": "true"}))
	}
	for _, user := range []string{"alice", "bob"} {
		add(user, paramsDeployment("unmatched-"+user, "none", 9, nil))
	}
	return out
}

// compareParams creates every case on both sides and reports differences.
func compareParams(ctx context.Context, t *testing.T, clients map[string]kubernetes.Interface, w *warnings, corpus []paramsCase) (denied, warned int) {
	t.Helper()
	for _, c := range corpus {
		native := createIn(ctx, t, clients[c.user], w, "params-native", c.obj)
		through := createIn(ctx, t, clients[c.user], w, "params-tollgate", c.obj)
		sameAnswer(t, c.user+" "+c.obj.Name, "tollgate", native, through)
		if !native.allowed {
			denied++
		}
		if len(native.warnings) > 0 {
			warned++
		}
	}
	return denied, warned
}

// setUpParams creates the param objects, the CRD of the custom param kind
// and its object, and the RBAC of the two users: both may create
// Deployments, only alice may approve them.
func setUpParams(ctx context.Context, t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	if err := framework.EnsureNamespace(ctx, cluster.client, "params-config", nil); err != nil {
		t.Fatal(err)
	}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Data: map[string]string{"max": "3"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "forbidden-a", Labels: map[string]string{"rule": "forbidden-name"}}, Data: map[string]string{"name": "names-evil"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "forbidden-b", Labels: map[string]string{"rule": "forbidden-name"}}, Data: map[string]string{"name": "names-wicked"}},
	} {
		if _, err := cluster.client.CoreV1().ConfigMaps("params-config").Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "replicalimits.limits.example.com"},
		"spec": map[string]any{
			"group": "limits.example.com", "scope": "Cluster",
			"names": map[string]any{"kind": "ReplicaLimit", "plural": "replicalimits", "singular": "replicalimit", "listKind": "ReplicaLimitList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	limit := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "limits.example.com/v1", "kind": "ReplicaLimit",
		"metadata": map[string]any{"name": "cluster-min"}, "spec": map[string]any{"min": int64(1)},
	}}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, err := dyn.Resource(limitGVR).Create(ctx, limit, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ReplicaLimit: %v", err)
		}
	}
	rbac := cluster.client.RbacV1()
	roles := []*rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: "params-deployer"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "params-approver"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"approve"}}}},
	}
	for _, r := range roles {
		if _, err := rbac.ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	user := func(n string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: n}
	}
	for _, b := range []*rbacv1.ClusterRoleBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "params-deployers"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "params-deployer"}, Subjects: []rbacv1.Subject{user("alice"), user("bob")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "params-approvers"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "params-approver"}, Subjects: []rbacv1.Subject{user("alice")}},
	} {
		if _, err := rbac.ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// paramsGone succeeds once the apiserver no longer calls tollgate-params.
func paramsGone(ctx context.Context) error {
	_, err := cluster.client.AppsV1().Deployments("params-tollgate").Create(ctx, paramsDeployment("gone", "absent-deny", 1, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}
