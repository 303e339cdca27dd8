package exception

import (
	"encoding/json"
	"path"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// Is tells whether a JSON document is a PolicyException.
func Is(js []byte) bool {
	var tm metav1.TypeMeta
	return json.Unmarshal(js, &tm) == nil && tm.APIVersion == APIVersion && tm.Kind == Kind
}

// Decode reads one PolicyException strictly (unknown and duplicate fields
// are errors) and validates it. Every problem is returned, with its field path.
func Decode(js []byte) (*Exception, field.ErrorList) {
	var e Exception
	se, err := sigsjson.UnmarshalStrict(js, &e, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath(""), "", err.Error())}
	}
	var errs field.ErrorList
	for _, s := range se {
		errs = append(errs, field.Invalid(field.NewPath(""), "", s.Error()))
	}
	if len(errs) > 0 {
		return &e, errs
	}
	return &e, e.validate()
}

func (e *Exception) validate() field.ErrorList {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	switch {
	case e.Metadata.Name == "":
		errs = append(errs, field.Required(name, "an exception needs a name"))
	default:
		for _, msg := range validation.IsDNS1123Subdomain(e.Metadata.Name) {
			errs = append(errs, field.Invalid(name, e.Metadata.Name, msg))
		}
	}
	spec := field.NewPath("spec")
	if len(e.Spec.Policies) == 0 {
		errs = append(errs, field.Required(spec.Child("policies"), "name the policies the objects are exempt from"))
	}
	errs = append(errs, uniqueNames(spec.Child("policies"), e.Spec.Policies, "a policy name")...)
	errs = append(errs, uniqueNames(spec.Child("rules"), e.Spec.Rules, "a rule: a label rule's key or a CEL expression's name")...)
	if strings.TrimSpace(e.Spec.Reason) == "" {
		errs = append(errs, field.Required(spec.Child("reason"), "say why the objects are exempt"))
	}
	errs = append(errs, e.validateMatch(spec.Child("match"))...)
	return errs
}

// uniqueNames requires each name of a list to be given once; what says
// what an empty entry should have been.
func uniqueNames(path *field.Path, names []string, what string) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, n := range names {
		switch {
		case strings.TrimSpace(n) == "":
			errs = append(errs, field.Required(path.Index(i), what))
		case seen.Has(n):
			errs = append(errs, field.Duplicate(path.Index(i), n))
		}
		seen.Insert(n)
	}
	return errs
}

func (e *Exception) validateMatch(fp *field.Path) field.ErrorList {
	m := e.Spec.Match
	var errs field.ErrorList
	if len(m.Namespaces) == 0 && len(m.Names) == 0 && len(m.Kinds) == 0 && m.Selector == nil {
		errs = append(errs, field.Required(fp, "give namespaces, names, kinds or a selector: an exception for every object is a disabled policy"))
	}
	for _, list := range []struct {
		name     string
		patterns []string
	}{{"namespaces", m.Namespaces}, {"names", m.Names}} {
		for i, p := range list.patterns {
			f := fp.Child(list.name).Index(i)
			if p == "" {
				errs = append(errs, field.Required(f, "a name or a pattern"))
			} else if _, err := path.Match(p, ""); err != nil {
				errs = append(errs, field.Invalid(f, p, err.Error()))
			}
		}
	}
	for i, k := range m.Kinds {
		f := fp.Child("kinds").Index(i)
		_, kind, _ := strings.Cut(k, "/")
		if !strings.Contains(k, "/") {
			kind = k
		}
		if kind == "" || strings.Count(k, "/") > 1 || strings.ContainsAny(kind, ". ") {
			errs = append(errs, field.Invalid(f, k, "want Kind or group/Kind, e.g. Pod or apps/DaemonSet"))
		}
	}
	if m.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(m.Selector)
		if err != nil {
			errs = append(errs, field.Invalid(fp.Child("selector"), m.Selector, err.Error()))
		}
		e.selector = sel
	}
	return errs
}
