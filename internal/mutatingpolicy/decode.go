package mutatingpolicy

import (
	"encoding/json"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
)

// Policy is a Kubernetes MutatingAdmissionPolicy, taken as users apply it
// to a cluster (admissionregistration.k8s.io/v1, or v1beta1 converted to
// v1), with the bindings that refer to it.
type Policy struct {
	Policy   *admissionregistrationv1.MutatingAdmissionPolicy
	Bindings []*admissionregistrationv1.MutatingAdmissionPolicyBinding
	// Mutator is the policy compiled by the apiserver's own code.
	Mutator *Compiled
}

// The versions of admissionregistration.k8s.io tollgate reads MAPs in.
const (
	admissionRegistrationV1      = "admissionregistration.k8s.io/v1"
	admissionRegistrationV1beta1 = "admissionregistration.k8s.io/v1beta1"
)

// Identify tells whether a document is a MutatingAdmissionPolicy or
// binding, of any version of admissionregistration.k8s.io (Decode refuses
// those other than v1 and v1beta1).
func Identify(js []byte) (kind, version string, ok bool) {
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

// Decode reads a MutatingAdmissionPolicy or binding (kind and version as
// Identify gave them) strictly in its own version, converts v1beta1 to v1,
// applies the apiserver's defaults, verifies what tollgate supports and
// compiles a policy. name is the document's, empty when it could not be
// decoded; a binding is returned with the errors of its verification.
func Decode(kind, version string, js []byte) (name string, p *Policy, b *admissionregistrationv1.MutatingAdmissionPolicyBinding, errs field.ErrorList) {
	if version != admissionRegistrationV1 && version != admissionRegistrationV1beta1 {
		return "", nil, nil, field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), version, []string{admissionRegistrationV1, admissionRegistrationV1beta1})}
	}
	if kind == "MutatingAdmissionPolicyBinding" {
		b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
		if errs := decodeVersioned(js, version, &admissionregistrationv1beta1.MutatingAdmissionPolicyBinding{}, b); len(errs) > 0 {
			return "", nil, nil, errs
		}
		admissionpolicy.DefaultMatchResources(b.Spec.MatchResources)
		return b.Name, nil, b, verifyBinding(b)
	}
	m := &admissionregistrationv1.MutatingAdmissionPolicy{}
	if errs := decodeVersioned(js, version, &admissionregistrationv1beta1.MutatingAdmissionPolicy{}, m); len(errs) > 0 {
		return "", nil, nil, errs
	}
	defaults(m)
	if errs := verifyPolicy(m); len(errs) > 0 {
		return m.Name, nil, nil, errs
	}
	compiled, errs := Compile(m)
	if len(errs) > 0 {
		return m.Name, nil, nil, errs
	}
	return m.Name, &Policy{Policy: m, Mutator: compiled}, nil, nil
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

// defaults applies the defaults the apiserver applies when storing a
// MutatingAdmissionPolicy; reinvocationPolicy has none, it is required.
func defaults(m *admissionregistrationv1.MutatingAdmissionPolicy) {
	s := &m.Spec
	if s.FailurePolicy == nil {
		f := admissionregistrationv1.Fail
		s.FailurePolicy = &f
	}
	admissionpolicy.DefaultMatchResources(s.MatchConstraints)
}
