package gatekeeper

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/manifest"
)

// library is gatekeeper-library as stored in the corpus (gzipped).
var library = filepath.Join("..", "..", "test", "corpus", "gatekeeper-library", "library")

func readJSON(t *testing.T, path string) []byte {
	t.Helper()
	data, err := manifest.ReadFile(path + ".gz")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func allowedRepos(t *testing.T, constraint []byte) *Evaluator {
	t.Helper()
	dir := filepath.Join(library, "general", "allowedrepos")
	tmpl, err := DecodeTemplate(readJSON(t, filepath.Join(dir, "template.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	if constraint == nil {
		constraint = readJSON(t, filepath.Join(dir, "samples", "repo-must-be-openpolicyagent", "constraint.yaml"))
	}
	c, err := DecodeConstraint(constraint)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEvaluator(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddTemplate(context.Background(), tmpl); err != nil {
		t.Fatal(err)
	}
	if err := e.AddConstraint(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return e
}

func podRequest(t *testing.T, ns, image string) *admissionv1.AdmissionRequest {
	t.Helper()
	pod := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return &admissionv1.AdmissionRequest{UID: "u", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, Name: "p", Namespace: ns,
		Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}
}

func TestReviewRequest(t *testing.T) {
	e := allowedRepos(t, nil)
	tests := []struct {
		name, ns, image string
		want            string // Gatekeeper's denial, "" for allowed
	}{
		{"allowed repo", "default", "openpolicyagent/opa:0.9.2", ""},
		{"other repo", "default", "nginx", `[repo-is-openpolicyagent] container <c> has an invalid image repo <nginx>, allowed repos are ["openpolicyagent/"]`},
		{"namespace not matched", "kube-public", "nginx", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tt.ns, Labels: map[string]string{"kubernetes.io/metadata.name": tt.ns}}}
			vs, err := e.ReviewRequest(context.Background(), podRequest(t, tt.ns, tt.image), ns, Webhook)
			if err != nil {
				t.Fatal(err)
			}
			if got := Words(vs).Denial; got != tt.want {
				t.Errorf("denial %q, want %q", got, tt.want)
			}
		})
	}
}

// TestNamespaceSelector gives the request's Namespace to the client: a
// Constraint's namespaceSelector reads its labels.
func TestNamespaceSelector(t *testing.T) {
	e := allowedRepos(t, []byte(`{"apiVersion":"constraints.gatekeeper.sh/v1beta1","kind":"K8sAllowedRepos","metadata":{"name":"repos"},
"spec":{"match":{"namespaceSelector":{"matchLabels":{"team":"a"}}},"parameters":{"repos":["openpolicyagent/"]}}}`))
	for _, tt := range []struct {
		labels map[string]string
		denied bool
	}{
		{map[string]string{"team": "a"}, true},
		{map[string]string{"team": "b"}, false},
		{nil, false},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: tt.labels, CreationTimestamp: metav1.Now()}}
		vs, err := e.ReviewRequest(context.Background(), podRequest(t, "n", "nginx"), ns, Webhook)
		if err != nil {
			t.Fatal(err)
		}
		if got := Words(vs).Denial != ""; got != tt.denied {
			t.Errorf("namespace labels %v: denied %v, want %v", tt.labels, got, tt.denied)
		}
	}
}

func TestEnforcementActions(t *testing.T) {
	constraint := func(action string, extra string) []byte {
		return []byte(`{"apiVersion":"constraints.gatekeeper.sh/v1beta1","kind":"K8sAllowedRepos","metadata":{"name":"repos"},
"spec":{"enforcementAction":"` + action + `"` + extra + `,"parameters":{"repos":["openpolicyagent/"]}}}`)
	}
	scoped := `,"scopedEnforcementActions":[{"action":"warn","enforcementPoints":[{"name":"validation.gatekeeper.sh"}]},{"action":"deny","enforcementPoints":[{"name":"audit.gatekeeper.sh"}]}]`
	tests := []struct {
		name, action, extra, point string
		denial                     bool
		warnings                   int
	}{
		{"deny", "deny", "", Webhook, true, 0},
		{"warn", "warn", "", Webhook, false, 1},
		{"dryrun", "dryrun", "", Webhook, false, 0},
		{"scoped at the webhook", "scoped", scoped, Webhook, false, 1},
		{"scoped at audit", "scoped", scoped, Audit, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := allowedRepos(t, constraint(tt.action, tt.extra))
			vs, err := e.ReviewRequest(context.Background(), podRequest(t, "default", "nginx"), nil, tt.point)
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != 1 {
				t.Fatalf("%d violations, want 1 (the result names the action)", len(vs))
			}
			a := Words(vs)
			if (a.Denial != "") != tt.denial || len(a.Warnings) != tt.warnings {
				t.Errorf("denial %q, warnings %q", a.Denial, a.Warnings)
			}
		})
	}
}

func TestRefused(t *testing.T) {
	celOnly := []byte(`{"apiVersion":"templates.gatekeeper.sh/v1","kind":"ConstraintTemplate","metadata":{"name":"k8scelonly"},
"spec":{"crd":{"spec":{"names":{"kind":"K8sCelOnly"}}},"targets":[{"target":"admission.k8s.gatekeeper.sh",
"code":[{"engine":"K8sNativeValidation","source":{"validations":[{"expression":"true","message":"m"}]}}]}]}}`)
	tmpl, err := DecodeTemplate(celOnly)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEvaluator(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddTemplate(context.Background(), tmpl); !errors.Is(err, ErrNoRego) {
		t.Errorf("CEL-only template: %v, want ErrNoRego", err)
	}
	if _, err := DecodeTemplate([]byte(`{"apiVersion":"templates.gatekeeper.sh/v1","kind":"ConstraintTemplate","metadata":{"name":"x"},"spec":{"crd":{},"bogus":1}}`)); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown field: %v, want it named", err)
	}
	badParams := []byte(`{"apiVersion":"constraints.gatekeeper.sh/v1beta1","kind":"K8sAllowedRepos","metadata":{"name":"repos"},"spec":{"parameters":{"repos":"not-a-list"}}}`)
	e = allowedRepos(t, nil)
	c, err := DecodeConstraint(badParams)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddConstraint(context.Background(), c); err == nil || !strings.Contains(err.Error(), "repos") {
		t.Errorf("parameters against the schema: %v, want the field named", err)
	}
	var u unstructured.Unstructured
	u.SetAPIVersion("constraints.gatekeeper.sh/v1beta1")
	u.SetKind("K8sNoSuchKind")
	u.SetName("x")
	if err := e.AddConstraint(context.Background(), &u); err == nil {
		t.Error("a Constraint of no template's kind was added")
	}
}
