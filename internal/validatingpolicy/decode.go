package validatingpolicy

import (
	"encoding/json"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/kyverno"
	"github.com/tollgate-dev/tollgate/internal/references"
)

// Policy is a Kubernetes ValidatingAdmissionPolicy, taken as users apply it
// to a cluster, with the bindings that refer to it.
type Policy struct {
	Policy   *admissionregistrationv1.ValidatingAdmissionPolicy
	Bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// Validator is the policy compiled by the apiserver's own code.
	Validator *cel.VAP
	// Kyverno is set for a policy read from a Kyverno ValidatingPolicy or
	// NamespacedValidatingPolicy, decided and worded as Kyverno does; its
	// autogen policies share it. KyvernoCompiled is what Kyverno's
	// evaluation of this policy adds to Validator.
	Kyverno         *kyverno.Info
	KyvernoCompiled *kyverno.Compiled
	// Autogen are the policies Kyverno's autogen derives from a Kyverno
	// policy on Pods, for the templates of Pod controllers
	// (kyverno.Decode): decided alongside the policy, under its name.
	Autogen []*Policy
}

// ForStore is the policy reading what it reads through Kyverno's resource
// library from store: itself when it reads nothing so.
func (v *Policy) ForStore(store *references.Store) (*Policy, error) {
	if v.KyvernoCompiled == nil {
		return v, nil
	}
	validator, compiled, err := v.KyvernoCompiled.ForStore(store)
	if err != nil || validator == nil {
		return v, err
	}
	out := *v
	out.Validator, out.KyvernoCompiled = validator, compiled
	return &out, nil
}

// MatchConstraints are the policy's matchConstraints with the resource
// rules of its autogen policies: what its webhook entries register.
func (v *Policy) MatchConstraints() *admissionregistrationv1.MatchResources {
	mc := v.Policy.Spec.MatchConstraints
	if len(v.Autogen) == 0 || mc == nil {
		return mc
	}
	mc = mc.DeepCopy()
	for _, a := range v.Autogen {
		mc.ResourceRules = append(mc.ResourceRules, a.Policy.Spec.MatchConstraints.ResourceRules...)
	}
	return mc
}

// admissionRegistrationV1 is the one version of ValidatingAdmissionPolicies.
const admissionRegistrationV1 = "admissionregistration.k8s.io/v1"

// Identify tells whether a document is a ValidatingAdmissionPolicy or binding.
func Identify(js []byte) (kind string, ok bool) {
	var tm metav1.TypeMeta
	if json.Unmarshal(js, &tm) != nil || tm.APIVersion != admissionRegistrationV1 {
		return "", false
	}
	switch tm.Kind {
	case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
		return tm.Kind, true
	}
	return "", false
}

// Decode reads a ValidatingAdmissionPolicy or binding (kind as Identify
// gave it) strictly, applies the defaults the apiserver applies when
// storing it, verifies what tollgate supports and compiles a policy. name
// is the document's, empty when it could not be decoded; a binding is
// returned with the errors of its verification.
func Decode(kind string, js []byte) (name string, p *Policy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, errs field.ErrorList) {
	strict := func(v any) field.ErrorList { return admissionpolicy.DecodeStrict(js, v) }
	if kind == "ValidatingAdmissionPolicyBinding" {
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		if errs := strict(b); len(errs) > 0 {
			return "", nil, nil, errs
		}
		admissionpolicy.DefaultMatchResources(b.Spec.MatchResources)
		var errs field.ErrorList
		spec := field.NewPath("spec")
		errs = append(errs, admissionpolicy.ValidName(b.Name)...)
		if b.Spec.PolicyName == "" {
			errs = append(errs, field.Required(spec.Child("policyName"), ""))
		}
		if len(b.Spec.ValidationActions) == 0 {
			errs = append(errs, field.Required(spec.Child("validationActions"), "Deny, Warn and/or Audit"))
		}
		seen, aerrs := admissionpolicy.CheckValidationActions(b.Spec.ValidationActions, spec.Child("validationActions"))
		errs = append(errs, aerrs...)
		if seen[admissionregistrationv1.Deny] && seen[admissionregistrationv1.Warn] {
			errs = append(errs, field.Invalid(spec.Child("validationActions"), b.Spec.ValidationActions, "must not contain both Deny and Warn, as the apiserver requires"))
		}
		errs = append(errs, admissionpolicy.ValidateParamRef(b.Spec.ParamRef, spec.Child("paramRef"))...)
		return b.Name, nil, b, errs
	}
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if errs := strict(vap); len(errs) > 0 {
		return "", nil, nil, errs
	}
	s := &vap.Spec
	if s.FailurePolicy == nil {
		f := admissionregistrationv1.Fail
		s.FailurePolicy = &f
	}
	spec := field.NewPath("spec")
	errs = append(errs, admissionpolicy.ValidName(vap.Name)...)
	if s.MatchConstraints == nil || len(s.MatchConstraints.ResourceRules) == 0 {
		errs = append(errs, field.Required(spec.Child("matchConstraints", "resourceRules"), ""))
	} else {
		admissionpolicy.DefaultMatchResources(s.MatchConstraints)
	}
	errs = append(errs, admissionpolicy.ValidateParamKind(s.ParamKind, spec.Child("paramKind"))...)
	if len(s.Validations) == 0 && len(s.AuditAnnotations) == 0 {
		errs = append(errs, field.Required(spec.Child("validations"), "validations or auditAnnotations"))
	}
	if len(errs) > 0 {
		return vap.Name, nil, nil, errs
	}
	compiled, cerrs := cel.CompileVAP(vap)
	if len(cerrs) > 0 {
		return vap.Name, nil, nil, cerrs
	}
	return vap.Name, &Policy{Policy: vap, Validator: compiled}, nil, nil
}
