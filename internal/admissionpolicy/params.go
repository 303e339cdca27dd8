package admissionpolicy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateParamKind checks a policy's spec.paramKind as the apiserver's
// validation does: apiVersion and kind are required, apiVersion parses.
func ValidateParamKind(k *admissionregistrationv1.ParamKind, path *field.Path) field.ErrorList {
	if k == nil {
		return nil
	}
	var errs field.ErrorList
	if k.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), ""))
	}
	if k.APIVersion == "" {
		errs = append(errs, field.Required(path.Child("apiVersion"), ""))
	} else if gv, err := schema.ParseGroupVersion(k.APIVersion); err != nil {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), k.APIVersion, err.Error()))
	} else if gv.Version == "" {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), k.APIVersion, "version must be specified"))
	}
	return errs
}

// ValidateParamRef checks a binding's spec.paramRef as the apiserver's
// validation does: exactly one of name and selector, a valid selector, and
// a parameterNotFoundAction of Allow or Deny. A binding may carry a
// paramRef for a policy without paramKind; the apiserver then ignores it.
func ValidateParamRef(r *admissionregistrationv1.ParamRef, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case r.Name != "" && r.Selector != nil:
		errs = append(errs, field.Forbidden(path.Child("name"), "name and selector are mutually exclusive"))
	case r.Name == "" && r.Selector == nil:
		errs = append(errs, field.Required(path, "one of name or selector must be specified"))
	}
	if r.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(r.Selector, metav1validation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
	}
	switch {
	case r.ParameterNotFoundAction == nil:
		errs = append(errs, field.Required(path.Child("parameterNotFoundAction"), ""))
	case *r.ParameterNotFoundAction != admissionregistrationv1.AllowAction && *r.ParameterNotFoundAction != admissionregistrationv1.DenyAction:
		errs = append(errs, field.NotSupported(path.Child("parameterNotFoundAction"), *r.ParameterNotFoundAction, []string{"Allow", "Deny"}))
	}
	return errs
}
