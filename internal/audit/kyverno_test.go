package audit

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestKyvernoEvaluation: a stored object is decided by a Kyverno policy
// whose evaluation.admission is off, and not by one whose
// evaluation.background is off.
func TestKyvernoEvaluation(t *testing.T) {
	doc := func(name, evaluation string) string {
		return `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: ` + name + `}
spec:
  evaluation: ` + evaluation + `
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [services]}]
  validations: [{expression: "object.spec.type != 'LoadBalancer'"}]
`
	}
	ps, err := policy.Parse("k.yaml", []byte(doc("admission-off", "{admission: {enabled: false}}")+"---\n"+doc("background-off", "{background: {enabled: false}}")))
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "lb", "namespace": "shop"}, "spec": map[string]any{"type": "LoadBalancer"}}}
	r := Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Kind: "Service", Namespaced: true}
	f := Evaluate(context.Background(), engine.New(set, engine.Options{}), r, u, nil)
	if len(f.Results) != 1 || f.Results[0].Policy != "admission-off" || f.Results[0].Outcome != engine.Fail {
		t.Errorf("results %+v, want admission-off failing alone", f.Results)
	}
}

// TestKyvernoExceptions: a stored object is lifted by a Kyverno
// PolicyException as an admitted one is, and the exceptions variable gets
// the allowed values of those that apply.
func TestKyvernoExceptions(t *testing.T) {
	const docs = `apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: no-lb}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [services]}]
  validations: [{expression: "object.spec.type != 'LoadBalancer' || object.metadata.name in exceptions.allowedValues"}]
---
apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata: {name: edge, namespace: shop}
spec:
  policyRefs: [{name: no-lb, kind: ValidatingPolicy}]
  matchConditions: [{name: edge, expression: "object.metadata.name == 'edge'"}]
---
apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata: {name: named, namespace: shop}
spec:
  policyRefs: [{name: no-lb, kind: ValidatingPolicy}]
  allowedValues: [public]
`
	ps, exs, err := policy.ParseFile("k.yaml", []byte(docs))
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.SetExceptions(exs); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(set, engine.Options{})
	r := Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Kind: "Service", Namespaced: true}
	for name, want := range map[string]engine.Outcome{"edge": engine.Skip, "public": engine.Pass, "lb": engine.Fail} {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": name, "namespace": "shop"}, "spec": map[string]any{"type": "LoadBalancer"}}}
		f := Evaluate(context.Background(), eng, r, u, nil)
		if len(f.Results) != 1 || f.Results[0].Outcome != want {
			t.Errorf("%s: results %+v, want %s", name, f.Results, want)
		}
	}
}
