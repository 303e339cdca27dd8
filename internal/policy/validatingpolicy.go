package policy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// selectedVAP makes served the ValidatingAdmissionPolicy v with only the
// given bindings, whose selectors, as the policy's, the apiserver has
// applied: they select everything there.
func selectedVAP(v *validatingpolicy.Policy, served *Policy, bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	c := *v
	c.Policy, c.Bindings = v.Policy.DeepCopy(), withoutSelectors(bindings, vapMatch)
	clearSelectors(c.Policy.Spec.MatchConstraints)
	c.Autogen = nil
	for _, a := range v.Autogen {
		ac := *a
		ac.Policy, ac.Bindings = a.Policy.DeepCopy(), c.Bindings
		clearSelectors(ac.Policy.Spec.MatchConstraints)
		c.Autogen = append(c.Autogen, &ac)
	}
	served.VAP = &c
}

const admissionRegistrationV1 = "admissionregistration.k8s.io/v1"

// decodeVAP is a ValidatingAdmissionPolicy or binding as a loaded document
// (see validatingpolicy.Decode).
func decodeVAP(kind string, js []byte) (*Policy, field.ErrorList) {
	name, v, b, errs := validatingpolicy.Decode(kind, js)
	switch {
	case name == "":
		return nil, errs
	case b != nil:
		return &Policy{Metadata: Metadata{Name: name}, binding: b}, errs
	case len(errs) > 0:
		return &Policy{Metadata: Metadata{Name: name}}, errs
	}
	return &Policy{
		Metadata: Metadata{Name: name},
		Spec:     Spec{FailurePolicy: failurePolicyOf(*v.Policy.Spec.FailurePolicy)},
		VAP:      v,
	}, nil
}
