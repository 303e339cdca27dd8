package backgroundaudit

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/audit"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// synced records what the auditor asks reports to hold, per namespace.
type synced struct {
	mu   sync.Mutex
	last map[string][]offline.Finding
}

func (s *synced) Sync(_ context.Context, ns string, findings []offline.Finding) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last[ns] = findings
	return 1, nil
}

func (s *synced) Existing(context.Context) (map[string]int, error) { return nil, nil }

// results are a namespace's results of a policy: object, outcome, binding and origin.
func (s *synced) results(ns, policy string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, f := range s.last[ns] {
		for _, r := range f.Results {
			if r.Policy == policy {
				out = append(out, fmt.Sprintf("%s:%s:%s:%s", f.Object.Name, r.Outcome, r.Binding, r.Origin))
			}
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestClusterPolicies runs the audit against a fake cluster holding a VAP
// and its binding: their results are reported with binding and origin; a
// VAP named as a config policy is the config's; the binding narrowed and
// the VAP deleted show in the reports.
func TestClusterPolicies(t *testing.T) {
	vap := object(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-password}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  validations:
  - expression: "!has(object.data) || !('password' in object.data)"
`)
	shadowed := object(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: require-environment}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  validations: [{expression: "false"}]
`)
	binding := object(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-password-everywhere}
spec:
  policyName: no-password
  validationActions: [Deny]
`)
	shadowedBinding := object(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: require-environment}
spec: {policyName: require-environment, validationActions: [Deny]}
`)
	objs := []runtime.Object{vap, shadowed, binding, shadowedBinding,
		object(t, `{apiVersion: v1, kind: Namespace, metadata: {name: a, labels: {team: a}}}`),
		object(t, `{apiVersion: v1, kind: Namespace, metadata: {name: b, labels: {team: b}}}`),
		object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: db, namespace: a, uid: u1}, data: {password: x}}`),
		object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: web, namespace: a, uid: u2}, data: {port: "80"}}`),
		object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: cache, namespace: b, uid: u3}, data: {password: x}}`),
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		audit.VAPResource.GVR:        "ValidatingAdmissionPolicyList",
		audit.VAPBindingResource.GVR: "ValidatingAdmissionPolicyBindingList",
		namespacesResource.GVR:       "NamespaceList",
		{Version: "v1", Resource: "configmaps"}: "ConfigMapList",
		{Version: "v1", Resource: "pods"}:       "PodList",
	}, objs...)
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "v1",
		APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: []string{"get", "list", "watch"}},
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"get", "list", "watch"}},
			{Name: "namespaces", Kind: "Namespace", Verbs: []string{"get", "list", "watch"}},
		},
	}}}}
	config, err := policy.LoadDefaults() // require-environment: Pods alone
	if err != nil {
		t.Fatal(err)
	}
	reports := &synced{last: map[string][]offline.Finding{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Client: client, Discovery: disc, Reports: reports, Policies: func() *policy.Set { return config },
			ClusterPolicies: true, WriteInterval: 10 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10s; a: %q, b: %q", what, reports.results("a", "no-password"), reports.results("b", "no-password"))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	const binds = "no-password-everywhere"
	waitFor("the cluster's VAP reported", func() bool {
		return reports.results("a", "no-password") == "db:fail:"+binds+":cluster web:pass:"+binds+":cluster" &&
			reports.results("b", "no-password") == "cache:fail:"+binds+":cluster"
	})
	if got := reports.results("a", "require-environment"); got != "" {
		t.Errorf("the cluster's require-environment audited (%s): the config's, on Pods alone, shadows it", got)
	}

	vaps := client.Resource(audit.VAPResource.GVR)
	bindings := client.Resource(audit.VAPBindingResource.GVR)
	narrowed := binding.DeepCopy()
	if err := unstructured.SetNestedStringMap(narrowed.Object, map[string]string{"team": "a"}, "spec", "matchResources", "namespaceSelector", "matchLabels"); err != nil {
		t.Fatal(err)
	}
	if _, err := bindings.Update(ctx, narrowed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the binding narrowed to team a", func() bool {
		return reports.results("b", "no-password") == "" && reports.results("a", "no-password") != ""
	})
	if err := vaps.Delete(ctx, "no-password", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the VAP deleted", func() bool { return reports.results("a", "no-password") == "" })
}
