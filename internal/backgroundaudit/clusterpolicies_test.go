package backgroundaudit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	client, disc := fakeCluster(objs...)
	config, err := policy.LoadDefaults() // require-environment: Pods alone
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	reports, waitFor := run(t, client, disc, config, &log)
	const binds = "no-password-everywhere"
	waitFor("the cluster's VAP reported", func() bool {
		return reports.results("a", "no-password") == "db:fail:"+binds+":cluster web:pass:"+binds+":cluster" &&
			reports.results("b", "no-password") == "cache:fail:"+binds+":cluster"
	})
	// The informers' first adds are in the first pass: nothing changed
	// since, so no second one, however long after clusterPolicyDelay.
	time.Sleep(3 * clusterPolicyDelay)
	if n := strings.Count(log.String(), "every object evaluated"); n != 1 {
		t.Errorf("%d full passes at the start, want 1:\n%s", n, log.String())
	}
	if got := reports.results("a", "require-environment"); got != "" {
		t.Errorf("the cluster's require-environment audited (%s): the config's, on Pods alone, shadows it", got)
	}

	ctx := context.Background()
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

// fakeCluster is a dynamic client and discovery of a cluster holding objs.
func fakeCluster(objs ...runtime.Object) (*dynamicfake.FakeDynamicClient, *fakediscovery.FakeDiscovery) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		audit.VAPResource.GVR:                   "ValidatingAdmissionPolicyList",
		audit.VAPBindingResource.GVR:            "ValidatingAdmissionPolicyBindingList",
		namespacesResource.GVR:                  "NamespaceList",
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
	return client, disc
}

// run audits the fake cluster with the cluster's VAPs until the test
// ends; waitFor polls the reports. log, when set, gets the audit's log.
func run(t *testing.T, client *dynamicfake.FakeDynamicClient, disc *fakediscovery.FakeDiscovery, config *policy.Set, log io.Writer) (*synced, func(string, func() bool)) {
	t.Helper()
	if log == nil {
		log = io.Discard
	}
	reports := &synced{last: map[string][]offline.Finding{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Client: client, Discovery: disc, Reports: reports, Policies: func() *policy.Set { return config },
			ClusterPolicies: true, WriteInterval: 10 * time.Millisecond, Log: slog.New(slog.NewTextHandler(log, nil))})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return reports, func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10s; reports %v", what, reports.all())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func (s *synced) all() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for ns, fs := range s.last {
		out[ns] = len(fs)
	}
	return out
}

// TestClusterPoliciesForbidden: without the RBAC to list VAPs, the audit
// says so once and audits tollgate's config; granted later, the cluster's
// VAPs join.
func TestClusterPoliciesForbidden(t *testing.T) {
	client, disc := fakeCluster(
		object(t, `{apiVersion: v1, kind: Namespace, metadata: {name: a}}`),
		object(t, `{apiVersion: v1, kind: Pod, metadata: {name: web, namespace: a, uid: u1}, spec: {containers: [{name: c, image: nginx}]}}`),
		object(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: pods-named-db}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations: [{expression: "object.metadata.name == 'db'"}]
`),
		object(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: pods-named-db}
spec: {policyName: pods-named-db, validationActions: [Warn]}
`))
	var granted atomic.Bool
	client.PrependReactor("list", "validatingadmissionpolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
		if granted.Load() {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(audit.VAPResource.GVR.GroupResource(), "", errors.New("RBAC: not granted"))
	})
	config, err := policy.LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	reports, waitFor := run(t, client, disc, config, &log)
	waitFor("tollgate's config audited", func() bool {
		return strings.HasPrefix(reports.results("a", "require-environment"), "web:fail:")
	})
	if got := reports.results("a", "pods-named-db"); got != "" {
		t.Errorf("the cluster's VAP reported without the right to list it: %s", got)
	}
	if n := strings.Count(log.String(), "cannot list or watch the cluster's ValidatingAdmissionPolicies"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, log.String())
	}
	granted.Store(true)
	waitFor("the cluster's VAP audited once granted", func() bool {
		return reports.results("a", "pods-named-db") == "web:warn:pods-named-db:cluster"
	})
}

// syncBuffer is a log written by the audit's goroutines and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
