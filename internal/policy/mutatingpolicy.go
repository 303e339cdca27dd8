package policy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/mutatingpolicy"
)

// selectedMAP makes served the MutatingAdmissionPolicy m with only the
// given bindings, whose selectors, as the policy's, the apiserver has
// applied: they select everything there.
func selectedMAP(m *mutatingpolicy.Policy, served *Policy, bindings []*admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	c := *m
	c.Policy, c.Bindings = m.Policy.DeepCopy(), withoutSelectors(bindings, mapMatch)
	clearSelectors(c.Policy.Spec.MatchConstraints)
	served.MAP = &c
}

// decodeMAP is a MutatingAdmissionPolicy or binding as a loaded document
// (see mutatingpolicy.Decode).
func decodeMAP(kind, version string, js []byte) (*Policy, field.ErrorList) {
	name, m, b, errs := mutatingpolicy.Decode(kind, version, js)
	switch {
	case name == "":
		return nil, errs
	case b != nil:
		return &Policy{Metadata: Metadata{Name: name}, mapBinding: b}, errs
	case len(errs) > 0:
		return &Policy{Metadata: Metadata{Name: name}}, errs
	}
	return &Policy{
		Metadata: Metadata{Name: name},
		Spec:     Spec{FailurePolicy: failurePolicyOf(*m.Policy.Spec.FailurePolicy)},
		MAP:      m,
	}, nil
}
