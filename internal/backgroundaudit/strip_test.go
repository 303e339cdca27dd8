package backgroundaudit

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/internal/audit"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// storedPod is a Pod as the apiserver stores it after kubectl apply: with
// managedFields and the last-applied-configuration annotation.
func storedPod() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "team-a", "uid": "u-1", "resourceVersion": "7", "labels": map[string]any{"app": "web"},
			"annotations": map[string]any{"owner": "team-a",
				corev1.LastAppliedConfigAnnotation: `{"apiVersion":"v1","kind":"Pod","metadata":{"annotations":{"owner":"team-a"},"labels":{"app":"web"},"name":"web","namespace":"team-a"},"spec":{"containers":[{"image":"nginx","name":"web"}]}}`},
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{}}}}},
		"spec":   map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}},
		"status": map[string]any{"phase": "Running", "qosClass": "BestEffort"},
	}}
}

// TestStrip: the informers drop managedFields and the last-applied
// annotation only while no loaded policy may read them, and the results of
// the object they hold are those of the object as stored. Cutting what a
// policy reads would change its result (the test could fail).
func TestStrip(t *testing.T) {
	tests := []struct {
		file string
		want strip
		// changes: cutting all three regardless would change a result.
		changes bool
	}{
		{"common.yaml", strip{managedFields: true, lastApplied: true, status: true}, false},
		{"annotations-counted.yaml", strip{managedFields: true, status: true}, true},
		{"managed-fields-read.yaml", strip{lastApplied: true, status: true}, true},
		{"status-read.yaml", strip{managedFields: true, lastApplied: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			set, err := policy.LoadPath(filepath.Join("testdata", "strip", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got := stripFor(set)
			if got != tt.want {
				t.Fatalf("stripFor = %+v, want %+v", got, tt.want)
			}
			eng := engine.New(set, engine.Options{Namespaces: func(name string) (*corev1.Namespace, bool) { return namespaces.Of(name, nil), true }})
			check := func(f offline.Finding) []engine.Result {
				if f.Err != nil {
					t.Fatal(f.Err)
				}
				f, _ = reported(f)
				return f.Results
			}
			decide := func(u *unstructured.Unstructured) []engine.Result {
				return check(audit.Evaluate(context.Background(), eng, podResource, u, audit.Dependences(set)))
			}
			// As the informer holds it, cut as s says.
			decideHeld := func(s strip) ([]engine.Result, *unstructured.Unstructured) {
				obj, err := s.hold(podResource)(storedPod())
				if err != nil {
					t.Fatal(err)
				}
				h := obj.(*held)
				// A Pod's labels are read in its JSON alone; a Namespace's are held (TestHeldNamespaceLabels).
				u := &unstructured.Unstructured{}
				if err := u.UnmarshalJSON(h.JSON); err != nil {
					t.Fatal(err)
				}
				if h.UID != "u-1" || h.Name != "web" || h.Namespace != "team-a" || h.ResourceVersion != "7" || h.Labels != nil || u.GetResourceVersion() != "" || u.GetLabels()["app"] != "web" {
					t.Errorf("held %+v", h)
				}
				return check(audit.EvaluateJSON(context.Background(), eng, podResource, h.JSON, h.Namespace, h.Name, h.UID, audit.Dependences(set))), u
			}
			stored := decide(storedPod())
			if len(stored) == 0 {
				t.Fatal("no policy applies to the Pod")
			}
			cut, u := decideHeld(got)
			_, hasManaged := u.Object["metadata"].(map[string]any)["managedFields"]
			_, hasApplied := u.GetAnnotations()[corev1.LastAppliedConfigAnnotation]
			_, hasStatus := u.Object["status"]
			if hasManaged == tt.want.managedFields || hasApplied == tt.want.lastApplied || hasStatus == tt.want.status || u.GetAnnotations()["owner"] != "team-a" {
				t.Errorf("held object's metadata: %v", u.Object["metadata"])
			}
			if !slices.Equal(cut, stored) {
				t.Errorf("results of the object held:\n%+v\nof the object stored:\n%+v", cut, stored)
			}
			all, _ := decideHeld(strip{managedFields: true, lastApplied: true, status: true})
			if changes := !slices.Equal(all, stored); changes != tt.changes {
				t.Errorf("cutting all three changes a result: %v, want %v", changes, tt.changes)
			}
		})
	}
}

// TestRecut: a policy that reads what the informers dropped is loaded (a
// cluster VAP counting annotations): the informers start again holding
// the last-applied annotation, and the ConfigMap that carries it fails.
func TestRecut(t *testing.T) {
	cm := object(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: db, namespace: a, uid: u1,
  annotations: {owner: team-a, kubectl.kubernetes.io/last-applied-configuration: "{}"}}, data: {port: "80"}}`)
	vap := func(name, expression string) *unstructured.Unstructured {
		return object(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+name+`}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  validations: [{expression: "`+expression+`"}]
`)
	}
	binding := func(name string) *unstructured.Unstructured {
		return object(t, `{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicyBinding, metadata: {name: `+name+`}, spec: {policyName: `+name+`, validationActions: [Deny]}}`)
	}
	client, disc := fakeCluster(cm, vap("owned", "object.metadata.annotations['owner'] != ''"), binding("owned"),
		object(t, `{apiVersion: v1, kind: Namespace, metadata: {name: a}}`))
	config, err := policy.LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	reports, waitFor := run(t, client, disc, config, &syncWriter{w: &log})
	waitFor("the first VAP reported", func() bool { return reports.results("a", "owned") == "db:pass:owned:cluster" })
	ctx := context.Background()
	if _, err := client.Resource(audit.VAPResource.GVR).Create(ctx, vap("few-annotations", "object.metadata.annotations.size() <= 1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource(audit.VAPBindingResource.GVR).Create(ctx, binding("few-annotations"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the annotations counted, last-applied included", func() bool {
		return reports.results("a", "few-annotations") == "db:fail:few-annotations:cluster"
	})
}

// syncWriter is a writer safe for the audit's goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestHeldNamespaceLabels: a Namespace's labels are held beside its JSON,
// for the namespaceSelectors; the kind and apiVersion are those of the
// resource watched.
func TestHeldNamespaceLabels(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "team-a", "uid": "u-9", "resourceVersion": "3", "labels": map[string]any{"team": "a"}}}}
	obj, err := strip{}.hold(namespacesResource)(u)
	if err != nil {
		t.Fatal(err)
	}
	h := obj.(*held)
	if h.Labels["team"] != "a" || h.Name != "team-a" || h.APIVersion != "v1" || h.Kind != "Namespace" {
		t.Errorf("held %+v", h)
	}
}
