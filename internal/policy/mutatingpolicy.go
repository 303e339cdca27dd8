package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel"
)

// MAP is a Kubernetes MutatingAdmissionPolicy, taken as users apply it to a
// cluster (admissionregistration.k8s.io/v1, or v1beta1 converted to v1),
// with the bindings that refer to it.
type MAP struct {
	Policy   *admissionregistrationv1.MutatingAdmissionPolicy
	Bindings []*admissionregistrationv1.MutatingAdmissionPolicyBinding
	// Mutator is the policy compiled by the apiserver's own code.
	Mutator *cel.MAP
}

// selected makes served the policy with only the given bindings, whose
// selectors, as the policy's, the apiserver has applied: they select
// everything there.
func (m *MAP) selected(served *Policy, bindings []*admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	c := *m
	c.Policy, c.Bindings = m.Policy.DeepCopy(), withoutSelectors(bindings, mapMatch)
	clearSelectors(c.Policy.Spec.MatchConstraints)
	served.MAP = &c
}

const admissionRegistrationV1beta1 = "admissionregistration.k8s.io/v1beta1"

// isMAP tells whether a document is a MutatingAdmissionPolicy or binding,
// of any version of admissionregistration.k8s.io (decodeMAP refuses those
// other than v1 and v1beta1).
func isMAP(js []byte) (kind, version string, ok bool) {
	var tm metav1.TypeMeta
	if json.Unmarshal(js, &tm) != nil || !strings.HasPrefix(tm.APIVersion, "admissionregistration.k8s.io/") {
		return "", "", false
	}
	switch tm.Kind {
	case "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding":
		return tm.Kind, tm.APIVersion, true
	}
	return "", "", false
}

// decodeMAP reads a MutatingAdmissionPolicy or binding strictly in its own
// version, converts v1beta1 to v1, applies the apiserver's defaults and
// verifies what tollgate supports.
func decodeMAP(kind, version string, js []byte) (*Policy, field.ErrorList) {
	if version != admissionRegistrationV1 && version != admissionRegistrationV1beta1 {
		return nil, field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), version, []string{admissionRegistrationV1, admissionRegistrationV1beta1})}
	}
	if kind == "MutatingAdmissionPolicyBinding" {
		b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
		if errs := decodeVersioned(js, version, &admissionregistrationv1beta1.MutatingAdmissionPolicyBinding{}, b); len(errs) > 0 {
			return nil, errs
		}
		admissionpolicy.DefaultMatchResources(b.Spec.MatchResources)
		return &Policy{Metadata: Metadata{Name: b.Name}, mapBinding: b}, verifyMAPBinding(b)
	}
	m := &admissionregistrationv1.MutatingAdmissionPolicy{}
	if errs := decodeVersioned(js, version, &admissionregistrationv1beta1.MutatingAdmissionPolicy{}, m); len(errs) > 0 {
		return nil, errs
	}
	defaultMAP(m)
	named := &Policy{Metadata: Metadata{Name: m.Name}}
	if errs := verifyMAP(m); len(errs) > 0 {
		return named, errs
	}
	compiled, errs := cel.CompileMAP(m)
	if len(errs) > 0 {
		return named, errs
	}
	return &Policy{
		Metadata: Metadata{Name: m.Name},
		Spec:     Spec{FailurePolicy: failurePolicyOf(*m.Spec.FailurePolicy)},
		MAP:      &MAP{Policy: m, Mutator: compiled},
	}, nil
}

// decodeVersioned decodes js strictly into out (v1); a v1beta1 document is
// decoded strictly into beta first and converted: the two versions have
// the same fields.
func decodeVersioned(js []byte, version string, beta, out any) field.ErrorList {
	if version == admissionRegistrationV1 {
		return admissionpolicy.DecodeStrict(js, out)
	}
	if errs := admissionpolicy.DecodeStrict(js, beta); len(errs) > 0 {
		return errs
	}
	converted, err := json.Marshal(beta)
	if err == nil {
		err = json.Unmarshal(converted, out)
	}
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("apiVersion"), fmt.Errorf("convert %s to %s: %w", version, admissionRegistrationV1, err))}
	}
	return nil
}

// defaultMAP applies the defaults the apiserver applies when storing a
// MutatingAdmissionPolicy; reinvocationPolicy has none, it is required.
func defaultMAP(m *admissionregistrationv1.MutatingAdmissionPolicy) {
	s := &m.Spec
	if s.FailurePolicy == nil {
		f := admissionregistrationv1.Fail
		s.FailurePolicy = &f
	}
	admissionpolicy.DefaultMatchResources(s.MatchConstraints)
}
