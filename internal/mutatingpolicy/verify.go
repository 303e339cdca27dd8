package mutatingpolicy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
)

// verifyPolicy refuses, as the apiserver does, a MutatingAdmissionPolicy it
// would not store.
func verifyPolicy(m *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &m.Spec
	errs = append(errs, admissionpolicy.ValidName(m.Name)...)
	errs = append(errs, admissionpolicy.ValidateParamKind(s.ParamKind, spec.Child("paramKind"))...)
	if s.MatchConstraints == nil {
		errs = append(errs, field.Required(spec.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, verifyRules(s.MatchConstraints, spec.Child("matchConstraints"), true)...)
	}
	if len(s.Mutations) == 0 {
		errs = append(errs, field.Required(spec.Child("mutations"), "mutations must contain at least one item"))
	}
	for i, mu := range s.Mutations {
		p := spec.Child("mutations").Index(i)
		switch mu.PatchType {
		case "":
			errs = append(errs, field.Required(p.Child("patchType"), ""))
		case admissionregistrationv1.PatchTypeJSONPatch:
			if mu.JSONPatch == nil || mu.JSONPatch.Expression == "" {
				errs = append(errs, field.Required(p.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
			}
			if mu.ApplyConfiguration != nil {
				errs = append(errs, field.Invalid(p.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
			}
		case admissionregistrationv1.PatchTypeApplyConfiguration:
			if mu.ApplyConfiguration == nil || mu.ApplyConfiguration.Expression == "" {
				errs = append(errs, field.Required(p.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
			}
			if mu.JSONPatch != nil {
				errs = append(errs, field.Invalid(p.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("patchType"), mu.PatchType, []string{string(admissionregistrationv1.PatchTypeApplyConfiguration), string(admissionregistrationv1.PatchTypeJSONPatch)}))
		}
	}
	if f := *s.FailurePolicy; f != admissionregistrationv1.Fail && f != admissionregistrationv1.Ignore {
		errs = append(errs, field.NotSupported(spec.Child("failurePolicy"), f, []string{"Fail", "Ignore"}))
	}
	if r := s.ReinvocationPolicy; r == "" {
		errs = append(errs, field.Required(spec.Child("reinvocationPolicy"), ""))
	} else if r != admissionregistrationv1.NeverReinvocationPolicy && r != admissionregistrationv1.IfNeededReinvocationPolicy {
		errs = append(errs, field.NotSupported(spec.Child("reinvocationPolicy"), r, []string{"IfNeeded", "Never"}))
	}
	if len(s.MatchConditions) > 64 {
		errs = append(errs, field.TooMany(spec.Child("matchConditions"), len(s.MatchConditions), 64))
	}
	conditions := make([]admissionregistrationv1.Variable, len(s.MatchConditions))
	for i, c := range s.MatchConditions {
		conditions[i] = admissionregistrationv1.Variable(c)
	}
	errs = append(errs, verifyNamed(spec.Child("matchConditions"), conditions, "")...)
	errs = append(errs, verifyNamed(spec.Child("variables"), s.Variables, " is not specified")...)
	return errs
}

// verifyNamed requires each named expression (a match condition or a
// variable) to have an expression and a name of its own; missing says
// what the apiserver adds to "name" or "expression" when either is empty.
func verifyNamed(path *field.Path, list []admissionregistrationv1.Variable, missing string) field.ErrorList {
	detail := func(what string) string {
		if missing == "" {
			return ""
		}
		return what + missing
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, v := range list {
		p := path.Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(p.Child("name"), detail("name")))
		case names.Has(v.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), v.Name))
		}
		names.Insert(v.Name)
		if v.Expression == "" {
			errs = append(errs, field.Required(p.Child("expression"), detail("expression")))
		}
	}
	return errs
}

// verifyBinding refuses a binding the apiserver would not store.
func verifyBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	errs = append(errs, admissionpolicy.ValidName(b.Name)...)
	if b.Spec.PolicyName == "" {
		errs = append(errs, field.Required(spec.Child("policyName"), ""))
	}
	errs = append(errs, admissionpolicy.ValidateParamRef(b.Spec.ParamRef, spec.Child("paramRef"))...)
	if b.Spec.MatchResources != nil {
		errs = append(errs, verifyRules(b.Spec.MatchResources, spec.Child("matchResources"), false)...)
	}
	return errs
}

// mutatingOperations are the operations a MutatingAdmissionPolicy may match.
var mutatingOperations = []string{"*", "CONNECT", "CREATE", "UPDATE"}

// verifyRules checks resource rules: required in a policy's
// matchConstraints, and never DELETE, which has no object to mutate.
func verifyRules(m *admissionregistrationv1.MatchResources, path *field.Path, required bool) field.ErrorList {
	var errs field.ErrorList
	if required && len(m.ResourceRules) == 0 {
		errs = append(errs, field.Required(path.Child("resourceRules"), ""))
	}
	for _, list := range []struct {
		name  string
		rules []admissionregistrationv1.NamedRuleWithOperations
	}{{"resourceRules", m.ResourceRules}, {"excludeResourceRules", m.ExcludeResourceRules}} {
		for i, r := range list.rules {
			p := path.Child(list.name).Index(i)
			if len(r.Operations) == 0 {
				errs = append(errs, field.Required(p.Child("operations"), ""))
			}
			for _, op := range r.Operations {
				if !sets.New(mutatingOperations...).Has(string(op)) {
					// The apiserver names the list without indexes.
					errs = append(errs, field.NotSupported(path.Child(list.name, "operations"), op, mutatingOperations))
				}
			}
			for _, f := range []struct {
				name string
				v    []string
			}{{"apiGroups", r.APIGroups}, {"apiVersions", r.APIVersions}, {"resources", r.Resources}} {
				if len(f.v) == 0 {
					errs = append(errs, field.Required(p.Child(f.name), ""))
				}
			}
		}
	}
	return errs
}
