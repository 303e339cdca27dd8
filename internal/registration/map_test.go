package registration

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestBuildMAP: a MutatingAdmissionPolicy is a mutating webhook of its own,
// with its rules ("*" as CREATE, UPDATE and CONNECT, never DELETE) and
// reinvocation policy.
func TestBuildMAP(t *testing.T) {
	doc := `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: m}
spec:
  reinvocationPolicy: IfNeeded
  failurePolicy: Ignore
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: ["*"], resources: [deployments]}]
    objectSelector: {matchLabels: {a: b}}
  mutations: [{patchType: JSONPatch, jsonPatch: {expression: "[JSONPatch{op: 'add', path: '/metadata/labels', value: {}}]"}}]
`
	ps, err := policy.Parse("m.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	m, v, err := Build(set, Options{URL: "https://a", CABundle: []byte("CA"), ExcludedNamespaces: []string{"kube-system"}})
	if err != nil {
		t.Fatal(err)
	}
	if v != nil || m == nil || len(m.Webhooks) != 1 {
		t.Fatalf("configurations %v %v", m, v)
	}
	w := m.Webhooks[0]
	ops := w.Rules[0].Operations
	if w.Name != "m.mutate.tollgate.dev" || *w.ClientConfig.URL != "https://a/mutate/m" || *w.ReinvocationPolicy != admissionregistrationv1.IfNeededReinvocationPolicy ||
		*w.FailurePolicy != admissionregistrationv1.Ignore || len(ops) != 3 || ops[0] != "CREATE" || ops[1] != "UPDATE" || ops[2] != "CONNECT" ||
		w.Rules[0].Resources[0] != "deployments" || w.ObjectSelector.MatchLabels["a"] != "b" ||
		w.NamespaceSelector.MatchExpressions[0].Values[0] != "kube-system" {
		t.Errorf("webhook %s", mustYAML(t, w))
	}
}
