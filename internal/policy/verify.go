package policy

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var knownOperations = []string{"CREATE", "UPDATE", "DELETE", "CONNECT", "*"}

// verify reports every problem of one policy, each with its field path.
func (p *Policy) verify() field.ErrorList {
	var errs field.ErrorList
	if p.APIVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), p.APIVersion, []string{APIVersion}))
	}
	if p.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), p.Kind, []string{Kind}))
	}
	name := field.NewPath("metadata", "name")
	if p.Metadata.Name == "" {
		errs = append(errs, field.Required(name, "every policy needs a name"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(p.Metadata.Name) {
			errs = append(errs, field.Invalid(name, p.Metadata.Name, msg))
		}
	}
	spec := field.NewPath("spec")
	errs = append(errs, p.Spec.Match.verify(spec.Child("match"))...)
	switch p.Spec.FailurePolicy {
	case "", Fail, Ignore:
	default:
		errs = append(errs, field.NotSupported(spec.Child("failurePolicy"), p.Spec.FailurePolicy, []string{string(Fail), string(Ignore)}))
	}
	actions := 0
	for _, set := range []bool{p.Spec.Validate != nil, p.Spec.Inject != nil, p.Spec.Mutate != nil, p.Spec.VerifyImages != nil} {
		if set {
			actions++
		}
	}
	switch {
	case actions == 0:
		errs = append(errs, field.Required(spec, "exactly one action is needed: validate, inject, mutate or verifyImages"))
	case actions > 1:
		errs = append(errs, field.Forbidden(spec, "a policy has exactly one action: validate, inject, mutate or verifyImages"))
	case p.Spec.VerifyImages != nil:
		errs = append(errs, p.Spec.VerifyImages.verify(spec.Child("verifyImages"))...)
		errs = append(errs, createOrUpdate(p.Spec.Match.Operations, spec.Child("match", "operations"))...)
	case p.Spec.Mutate != nil:
		errs = append(errs, p.Spec.Mutate.verify(spec.Child("mutate"))...)
		errs = append(errs, createOrUpdate(p.Spec.Match.Operations, spec.Child("match", "operations"))...)
	case p.Spec.Validate != nil:
		errs = append(errs, p.Spec.Validate.verify(spec.Child("validate"))...)
	default:
		errs = append(errs, p.Spec.Inject.verify(spec.Child("inject"))...)
		errs = append(errs, verifyInjectMatch(&p.Spec.Match, spec.Child("match"))...)
	}
	return errs
}

// createOrUpdate refuses operations other than CREATE and UPDATE, for
// actions that need an object.
func createOrUpdate(ops []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, op := range ops {
		if op != "CREATE" && op != "UPDATE" {
			errs = append(errs, field.NotSupported(path.Index(i), op, []string{"CREATE", "UPDATE"}))
		}
	}
	return errs
}

func (m *Match) verify(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(m.Resources) == 0 {
		errs = append(errs, field.Required(path.Child("resources"), "name at least one resource, e.g. pods"))
	}
	for i, r := range m.Resources {
		if _, err := parseResource(r); err != nil {
			errs = append(errs, field.Invalid(path.Child("resources").Index(i), r, err.Error()))
		}
	}
	for i, op := range m.Operations {
		if !sets.New(knownOperations...).Has(op) {
			errs = append(errs, field.NotSupported(path.Child("operations").Index(i), op, knownOperations))
		}
	}
	opts := metav1validation.LabelSelectorValidationOptions{}
	if m.NamespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.NamespaceSelector, opts, path.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.ObjectSelector, opts, path.Child("objectSelector"))...)
	}
	errs = append(errs, verifyNamedExpressions(path.Child("conditions"), m.Conditions, false)...)
	for i, ns := range m.ExcludeNamespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(path.Child("excludeNamespaces").Index(i), ns, msg))
		}
	}
	return errs
}

func (v *Validate) verify(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(v.Labels) == 0 && len(v.Expressions) == 0 {
		errs = append(errs, field.Required(path, "name labels to require or CEL expressions to check"))
	}
	errs = append(errs, verifyAction(path.Child("action"), v.Action)...)
	errs = append(errs, verifyNamedExpressions(path.Child("variables"), v.Variables, true)...)
	for i, e := range v.Expressions {
		if e.Expression == "" {
			errs = append(errs, field.Required(path.Child("expressions").Index(i).Child("expression"), ""))
		}
	}
	seen := sets.New[string]()
	for i, rule := range v.Labels {
		p := path.Child("labels").Index(i)
		if rule.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), ""))
			continue
		}
		for _, msg := range validation.IsQualifiedName(rule.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), rule.Key, msg))
		}
		if seen.Has(rule.Key) {
			errs = append(errs, field.Duplicate(p.Child("key"), rule.Key))
		}
		seen.Insert(rule.Key)
		for j, value := range rule.Values {
			for _, msg := range validation.IsValidLabelValue(value) {
				errs = append(errs, field.Invalid(p.Child("values").Index(j), value, msg))
			}
		}
	}
	return append(errs, verifyRuleNames(path.Child("expressions"), v.Expressions, seen)...)
}

// verifyRuleNames verifies the optional names of CEL rules, by which a
// PolicyException exempts a rule: qualified names, unique, and none the
// key of one of the policy's label rules (labelKeys), which names that rule.
func verifyRuleNames(path *field.Path, list []Expression, labelKeys sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, e := range list {
		if e.Name == "" {
			continue
		}
		p := path.Index(i).Child("name")
		switch msgs := validation.IsQualifiedName(e.Name); {
		case len(msgs) > 0:
			errs = append(errs, field.Invalid(p, e.Name, strings.Join(msgs, "; ")))
		case seen.Has(e.Name):
			errs = append(errs, field.Duplicate(p, e.Name))
		case labelKeys.Has(e.Name):
			errs = append(errs, field.Invalid(p, e.Name, "a label rule of this policy has this key: a rule's name must say which rule it is"))
		}
		seen.Insert(e.Name)
	}
	return errs
}

func (m *Mutate) verify(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(m.Labels)+len(m.Annotations)+len(m.Patches) == 0 {
		errs = append(errs, field.Required(path, "set labels or annotations, or give patches"))
	}
	for k, v := range m.Labels {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path.Child("labels").Key(k), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(path.Child("labels").Key(k), v, msg))
		}
	}
	for k := range m.Annotations {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path.Child("annotations").Key(k), k, msg))
		}
	}
	for i, pe := range m.Patches {
		if pe.Expression == "" {
			errs = append(errs, field.Required(path.Child("patches").Index(i).Child("expression"), ""))
		}
	}
	return errs
}

func (in *Inject) verify(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(in.Containers)+len(in.InitContainers)+len(in.Volumes)+len(in.ImagePullSecrets) == 0 {
		errs = append(errs, field.Required(path, "inject at least one container, init container, volume or image pull secret"))
	}
	// Containers and init containers share one namespace of names in a Pod.
	names := sets.New[string]()
	for _, list := range []struct {
		field      string
		containers []corev1.Container
	}{{"initContainers", in.InitContainers}, {"containers", in.Containers}} {
		for i, c := range list.containers {
			p := path.Child(list.field).Index(i)
			errs = append(errs, verifyName(p.Child("name"), c.Name, names)...)
			if c.Image == "" {
				errs = append(errs, field.Required(p.Child("image"), "an injected container needs an image"))
			}
		}
	}
	volumes := sets.New[string]()
	for i, v := range in.Volumes {
		errs = append(errs, verifyName(path.Child("volumes").Index(i).Child("name"), v.Name, volumes)...)
	}
	secrets := sets.New[string]()
	for i, s := range in.ImagePullSecrets {
		p := path.Child("imagePullSecrets").Index(i).Child("name")
		if s.Name == "" {
			errs = append(errs, field.Required(p, ""))
		} else if secrets.Has(s.Name) {
			errs = append(errs, field.Duplicate(p, s.Name))
		}
		secrets.Insert(s.Name)
	}
	if o := in.OptOut; o != nil {
		p := path.Child("optOut")
		if o.Disabled && o.NamespaceSelector != nil {
			errs = append(errs, field.Invalid(p.Child("namespaceSelector"), o.NamespaceSelector, "an opt-out that is disabled has no namespaces to allow it in; set one of disabled and namespaceSelector"))
		}
		if o.NamespaceSelector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(o.NamespaceSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("namespaceSelector"))...)
		}
	}
	return errs
}

// verifyNamedExpressions verifies conditions and variables: each has a unique
// name (a qualified name for conditions, as matchConditions; a CEL
// identifier for variables) and an expression.
func verifyNamedExpressions(path *field.Path, list []NamedExpression, variable bool) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, ne := range list {
		p := path.Index(i)
		switch {
		case ne.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case variable && !celIdentifier.MatchString(ne.Name):
			errs = append(errs, field.Invalid(p.Child("name"), ne.Name, "must be a CEL identifier: a letter or _, then letters, digits or _"))
		case !variable && len(validation.IsQualifiedName(ne.Name)) > 0:
			errs = append(errs, field.Invalid(p.Child("name"), ne.Name, strings.Join(validation.IsQualifiedName(ne.Name), "; ")))
		case seen.Has(ne.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), ne.Name))
		}
		seen.Insert(ne.Name)
		if ne.Expression == "" {
			errs = append(errs, field.Required(p.Child("expression"), ""))
		}
	}
	return errs
}

var celIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func verifyName(path *field.Path, name string, seen sets.Set[string]) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if seen.Has(name) {
		errs = append(errs, field.Duplicate(path, name))
	}
	seen.Insert(name)
	return errs
}

// verifyInjectMatch keeps injection to what a Pod allows: containers can only
// be added when a Pod is created, never by an update.
func verifyInjectMatch(m *Match, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(m.Conditions) > 0 {
		errs = append(errs, field.Forbidden(path.Child("conditions"), "not supported for injection policies yet"))
	}
	if m.PodControllers {
		errs = append(errs, field.Forbidden(path.Child("podControllers"), "injection applies to Pods as they are created"))
	}
	for i, r := range m.Resources {
		if gr, err := parseResource(r); err == nil && (gr.Group != "" || gr.Resource != "pods") {
			errs = append(errs, field.NotSupported(path.Child("resources").Index(i), r, []string{"pods"}))
		}
	}
	for i, op := range m.Operations {
		if op != "CREATE" && sets.New(knownOperations...).Has(op) {
			errs = append(errs, field.NotSupported(path.Child("operations").Index(i), op, []string{"CREATE"}))
		}
	}
	return errs
}

// verifyAction checks a validate or verifyImages action.
func verifyAction(path *field.Path, a ValidateAction) field.ErrorList {
	switch a {
	case "", Deny, Warn, Audit:
		return nil
	}
	return field.ErrorList{field.NotSupported(path, a, []ValidateAction{Deny, Warn, Audit})}
}
