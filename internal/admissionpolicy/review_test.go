package admissionpolicy

import (
	"os"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	listersv1 "k8s.io/client-go/listers/core/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
)

// TestMatchAttributes: the apiserver's matcher decides the same on the
// objects' metadata alone as on the objects decoded whole, for every
// selector it reads (object labels, old object labels, a Namespace's own
// labels, namespace labels), and reading the metadata decodes nothing.
func TestMatchAttributes(t *testing.T) {
	var reviews []*admission.Request
	for _, f := range []string{"review-pod-create.json", "review-pod-update.json", "review-pod-delete.json"} {
		reviews = append(reviews, decoded(t, "../admission/testdata/"+f))
	}
	ns := decoded(t, "../admission/testdata/review-pod-create.json")
	ns.Kind.Kind, ns.Resource.Resource, ns.Namespace, ns.Name = "Namespace", "namespaces", "", "shop"
	ns.SetObjects([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop","labels":{"team":"payments"}}}`), nil)
	reviews = append(reviews, ns)

	sel := func(k, v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	}
	all := []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{"*"},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
	}}}
	var constraints []*admissionregistrationv1.MatchResources
	for _, s := range []struct{ ns, obj *metav1.LabelSelector }{
		{nil, nil},
		{nil, sel("team", "payments")},
		{nil, sel("team", "other")},
		{nil, sel("app.kubernetes.io/name", "checkout")},
		{sel("team", "payments"), nil},
		{sel("kubernetes.io/metadata.name", "shop"), nil},
		{sel("kubernetes.io/metadata.name", "other"), sel("environment", "prod")},
	} {
		constraints = append(constraints, &admissionregistrationv1.MatchResources{NamespaceSelector: s.ns, ObjectSelector: s.obj, ResourceRules: all})
	}
	matcher := generic.NewPolicyMatcher(matching.NewMatcher(namespaceLister{}, nil))
	interfaces := k8sadmission.NewObjectInterfacesFromScheme(runtime.NewScheme())
	for _, req := range reviews {
		rv := NewReview(req)
		meta, err := rv.MatchAttributes()
		if err != nil {
			t.Fatal(err)
		}
		if rv.whole != nil {
			t.Fatalf("%s %s: matching decoded the objects", req.Operation, req.Kind.Kind)
		}
		whole, err := rv.Attributes()
		if err != nil {
			t.Fatal(err)
		}
		for i, mc := range constraints {
			mp := admissionregistrationv1.Equivalent
			mc.MatchPolicy = &mp
			mc.NamespaceSelector, mc.ObjectSelector = orEmpty(mc.NamespaceSelector), orEmpty(mc.ObjectSelector)
			def := validating.NewValidatingAdmissionPolicyAccessor(&admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: mc}})
			m1, _, _, err1 := matcher.DefinitionMatches(meta, interfaces, def)
			m2, _, _, err2 := matcher.DefinitionMatches(whole, interfaces, def)
			if m1 != m2 || (err1 == nil) != (err2 == nil) {
				t.Errorf("%s %s, constraints %d: on metadata %v (%v), whole %v (%v)", req.Operation, req.Kind.Kind, i, m1, err1, m2, err2)
			}
		}
	}
}

func orEmpty(s *metav1.LabelSelector) *metav1.LabelSelector {
	if s == nil {
		return &metav1.LabelSelector{}
	}
	return s
}

func decoded(t *testing.T, file string) *admission.Request {
	t.Helper()
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := admission.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	return &r.Request
}

// namespaceLister knows one namespace, shop.
type namespaceLister struct{}

func (namespaceLister) List(labels.Selector) ([]*corev1.Namespace, error) { return nil, nil }
func (namespaceLister) Get(name string) (*corev1.Namespace, error) {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/metadata.name": name, "team": "payments"}}}, nil
}

var _ listersv1.NamespaceLister = namespaceLister{}
