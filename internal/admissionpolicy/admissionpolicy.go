// Package admissionpolicy holds what Kubernetes' admission policies
// share when tollgate reads them (ValidatingAdmissionPolicies,
// MutatingAdmissionPolicies and their bindings, and Kyverno's policies
// read as them): strict decoding, the apiserver's check of their names
// and params, its defaults for what they match, why one does not apply
// to a request, and the request as the policies of one webhook call read
// it (review.go).
package admissionpolicy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// DecodeStrict decodes a Kubernetes object, refusing unknown and duplicate
// fields; sigs.k8s.io/json names the field path of each.
func DecodeStrict(js []byte, v any) field.ErrorList {
	se, err := sigsjson.UnmarshalStrict(js, v, sigsjson.DisallowUnknownFields)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath(""), "", err.Error())}
	}
	var errs field.ErrorList
	for _, e := range se {
		errs = append(errs, field.Invalid(field.NewPath(""), "", e.Error()))
	}
	return errs
}

// ValidName checks a policy's or binding's name as the apiserver does: a
// DNS subdomain, which also keeps webhook names and paths made of it valid.
func ValidName(name string) field.ErrorList {
	p := field.NewPath("metadata", "name")
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// DefaultMatchResources applies the apiserver's defaults for stored
// objects: empty selectors match everything, matchPolicy is Equivalent and
// rules apply to every scope.
func DefaultMatchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	if m.MatchPolicy == nil {
		p := admissionregistrationv1.Equivalent
		m.MatchPolicy = &p
	}
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				s := admissionregistrationv1.AllScopes
				rules[i].Scope = &s
			}
		}
	}
}

// CheckValidationActions checks a binding's validationActions as the
// apiserver does, each Deny, Warn or Audit, none twice; path is the
// field's. It returns the actions seen.
func CheckValidationActions(actions []admissionregistrationv1.ValidationAction, path *field.Path) (map[admissionregistrationv1.ValidationAction]bool, field.ErrorList) {
	var errs field.ErrorList
	seen := map[admissionregistrationv1.ValidationAction]bool{}
	for i, a := range actions {
		p := path.Index(i)
		switch {
		case a != admissionregistrationv1.Deny && a != admissionregistrationv1.Warn && a != admissionregistrationv1.Audit:
			errs = append(errs, field.NotSupported(p, a, []string{"Deny", "Warn", "Audit"}))
		case seen[a]:
			errs = append(errs, field.Duplicate(p, a))
		}
		seen[a] = true
	}
	return seen, errs
}
