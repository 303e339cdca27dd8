package admissionpolicy

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
)

// objectInterfaces is what the apiserver's matcher asks of a scheme: none
// is needed, as no request is converted.
var objectInterfaces = k8sadmission.NewObjectInterfacesFromScheme(runtime.NewScheme())

// Why an admission policy (validating or mutating) does not apply to a
// request, in the words reports show.
const (
	NotMatched = "does not match the request"
	NoBinding  = "no binding"
)

// MatchConditionsNotMet is why a policy whose matchConditions are not all
// true does not apply; name is the first false one.
func MatchConditionsNotMet(name string) string {
	return "match conditions not met: " + name
}

// PolicyMiss says why a policy's matchConstraints, which the apiserver's
// matcher does not match to the request, do not select it (see miss).
func PolicyMiss(matcher generic.PolicyMatcher, attrs k8sadmission.Attributes, mc *admissionregistrationv1.MatchResources) string {
	return miss(attrs, mc, "the policy", func(m *admissionregistrationv1.MatchResources) bool {
		def := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: m}}
		ok, _, _, err := matcher.DefinitionMatches(attrs, objectInterfaces, validating.NewValidatingAdmissionPolicyAccessor(def))
		return ok && err == nil
	})
}

// BindingMiss says why a binding the apiserver's matcher does not match to
// the request does not select it (see miss). mr is the binding's
// matchResources (not nil: a binding without any matches every request).
func BindingMiss(matcher generic.PolicyMatcher, attrs k8sadmission.Attributes, binding string, mr *admissionregistrationv1.MatchResources) string {
	return miss(attrs, mr, "binding "+binding, func(m *admissionregistrationv1.MatchResources) bool {
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{MatchResources: m}}
		ok, err := matcher.BindingMatches(attrs, objectInterfaces, validating.NewValidatingAdmissionPolicyBindingAccessor(b))
		return ok && err == nil
	})
}

// miss names what of mr leaves the request out: its namespaceSelector, its
// objectSelector, both, or its resource rules. It asks the same matcher
// with the selectors lifted ({} selects everything), so the answer is the
// apiserver's own; it runs only for a request that is not selected.
func miss(attrs k8sadmission.Attributes, mr *admissionregistrationv1.MatchResources, who string, matches func(*admissionregistrationv1.MatchResources) bool) string {
	if mr == nil {
		return NotMatched
	}
	ns := attrs.GetNamespace()
	if r := attrs.GetResource(); r.Group == "" && r.Resource == "namespaces" && attrs.GetSubresource() == "" {
		ns = attrs.GetName() // a Namespace is selected by its own labels
	}
	lifted := func(namespace, object bool) bool {
		m := *mr
		if namespace {
			m.NamespaceSelector = &metav1.LabelSelector{}
		}
		if object {
			m.ObjectSelector = &metav1.LabelSelector{}
		}
		return matches(&m)
	}
	switch {
	case lifted(true, false):
		return fmt.Sprintf("%s does not select namespace %s", who, ns)
	case lifted(false, true):
		return fmt.Sprintf("%s does not select the object's labels", who)
	case lifted(true, true):
		return fmt.Sprintf("%s selects neither namespace %s nor the object's labels", who, ns)
	case who == "the policy":
		return NotMatched
	default:
		return who + " does not match the request"
	}
}
