package kyverno

// Kyverno's ValidatingPolicy and NamespacedValidatingPolicy
// (policies.kyverno.io), read strictly and compiled as a
// ValidatingAdmissionPolicy with its binding inline.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/references"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
)

// Group is the API group of Kyverno's CEL policies.
const Group = "policies.kyverno.io"

// The Kyverno kinds tollgate reads, and the versions Kyverno serves each in
// (Kyverno's config/crds/policies.kyverno.io/, at the commit the package
// doc names: ValidatingPolicy v1alpha1, v1beta1, v1; NamespacedValidatingPolicy
// v1beta1, v1; the same schema in every version).
const (
	ValidatingPolicy           = "ValidatingPolicy"
	NamespacedValidatingPolicy = "NamespacedValidatingPolicy"
)

var versions = map[string][]string{
	ValidatingPolicy:           {"v1alpha1", "v1beta1", "v1"},
	NamespacedValidatingPolicy: {"v1beta1", "v1"},
}

// object is a ValidatingPolicy or NamespacedValidatingPolicy, as
// github.com/kyverno/api declares it (api/policies.kyverno.io/v1beta1/
// validating_policy.go), with only the fields its CRD declares.
type object struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              spec `json:"spec"`
	// Status is written by Kyverno's controllers; kept as read, unused.
	Status json.RawMessage `json:"status,omitempty"`
}

type spec struct {
	MatchConstraints     *admissionregistrationv1.MatchResources    `json:"matchConstraints,omitempty"`
	Validations          []admissionregistrationv1.Validation       `json:"validations,omitempty"`
	FailurePolicy        *admissionregistrationv1.FailurePolicyType `json:"failurePolicy,omitempty"`
	AuditAnnotations     []admissionregistrationv1.AuditAnnotation  `json:"auditAnnotations,omitempty"`
	MatchConditions      []admissionregistrationv1.MatchCondition   `json:"matchConditions,omitempty"`
	Variables            []admissionregistrationv1.Variable         `json:"variables,omitempty"`
	Autogen              *autogenConfig                             `json:"autogen,omitempty"`
	ValidationActions    []admissionregistrationv1.ValidationAction `json:"validationActions,omitempty"`
	WebhookConfiguration *struct {
		TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	} `json:"webhookConfiguration,omitempty"`
	Evaluation *evaluation `json:"evaluation,omitempty"`
}

type autogenConfig struct {
	PodControllers *struct {
		Controllers []string `json:"controllers,omitempty"`
	} `json:"podControllers,omitempty"`
	ValidatingAdmissionPolicy *struct {
		Enabled *bool `json:"enabled,omitempty"`
	} `json:"validatingAdmissionPolicy,omitempty"`
}

type evaluation struct {
	Admission  *enabled `json:"admission,omitempty"`
	Background *enabled `json:"background,omitempty"`
	// Mode is Kubernetes (the default), JSON, HTTP or Envoy.
	Mode string `json:"mode,omitempty"`
}

type enabled struct {
	Enabled *bool `json:"enabled,omitempty"`
}

func (e *enabled) on() bool { return e == nil || e.Enabled == nil || *e.Enabled }

// Info is what tollgate keeps of a Kyverno policy's own fields; its
// autogen policies share it.
type Info struct {
	// Kind is ValidatingPolicy or NamespacedValidatingPolicy.
	Kind string
	// Namespace is a NamespacedValidatingPolicy's: it applies only there.
	Namespace string
	// Admission and Background are evaluation.admission.enabled and
	// evaluation.background.enabled (both true by default).
	Admission, Background bool
	// controllers: see AutogenControllers.
	controllers []string
	// resources are what it reads through Kyverno's resource library,
	// nil for nothing; its autogen policies read the same.
	resources *Resources
	// Exceptions are the policies.kyverno.io PolicyExceptions naming the
	// policy, in load order; its autogen policies share them.
	Exceptions []*Exception
}

// Policy is a Kyverno ValidatingPolicy or NamespacedValidatingPolicy,
// read and compiled as ValidatingAdmissionPolicies.
type Policy struct {
	Name                string
	Labels, Annotations map[string]string
	// Info is what tollgate keeps of its own fields.
	Info *Info
	// Main is the policy as a ValidatingAdmissionPolicy, with its binding.
	Main Variant
	// Autogen are the policies Kyverno's autogen derives from it, for the
	// templates of Pod controllers: decided alongside it, under its name.
	Autogen []Variant
	// References are the store's references of what it reads through
	// Kyverno's resource library (nil for none).
	References []*references.Compiled
}

// Variant is one ValidatingAdmissionPolicy a Kyverno policy is decided as.
type Variant struct {
	VAP     *admissionregistrationv1.ValidatingAdmissionPolicy
	Binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// Validator is the apiserver's validator of VAP, and Compiled what
	// Kyverno's evaluation adds to it.
	Validator *cel.VAP
	Compiled  *Compiled
}

// Identify tells whether a document is of Kyverno's policies.kyverno.io
// group, and its kind and version.
func Identify(js []byte) (kind, version string, ok bool) {
	var tm metav1.TypeMeta
	if json.Unmarshal(js, &tm) != nil {
		return "", "", false
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil || gv.Group != Group {
		return "", "", false
	}
	return tm.Kind, gv.Version, true
}

// Decode reads a Kyverno ValidatingPolicy or NamespacedValidatingPolicy
// strictly and compiles it as a ValidatingAdmissionPolicy with one
// binding, named as the policy, that selects everything its
// matchConstraints select, with its validationActions. Every other kind of
// the group is refused. On errors the Policy returned, if any, has only
// its name.
func Decode(kind, version string, js []byte) (*Policy, field.ErrorList) {
	versions, known := versions[kind]
	if !known {
		return nil, field.ErrorList{field.NotSupported(field.NewPath("kind"), kind, []string{ValidatingPolicy, NamespacedValidatingPolicy})}
	}
	served := false
	for _, v := range versions {
		served = served || v == version
	}
	if !served {
		return nil, field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), Group+"/"+version, prefixed(versions))}
	}
	k := &object{}
	if errs := admissionpolicy.DecodeStrict(js, k); len(errs) > 0 {
		return nil, errs
	}
	named := &Policy{Name: k.Name}
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, admissionpolicy.ValidName(k.Name)...)
	namespaced := kind == NamespacedValidatingPolicy
	switch {
	case namespaced && k.Namespace == "":
		errs = append(errs, field.Required(field.NewPath("metadata", "namespace"), "a NamespacedValidatingPolicy applies in its namespace"))
	case !namespaced && k.Namespace != "":
		errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), k.Namespace, "a ValidatingPolicy is cluster-scoped"))
	}
	s := &k.Spec
	if s.MatchConstraints == nil || len(s.MatchConstraints.ResourceRules) == 0 {
		errs = append(errs, field.Required(spec.Child("matchConstraints", "resourceRules"), "Kyverno matches nothing without it"))
	}
	if len(s.Validations) == 0 {
		errs = append(errs, field.Required(spec.Child("validations"), ""))
	}
	if s.Evaluation != nil && s.Evaluation.Mode != "" && s.Evaluation.Mode != "Kubernetes" {
		errs = append(errs, field.NotSupported(spec.Child("evaluation", "mode"), s.Evaluation.Mode, []string{"Kubernetes"}))
	}
	actions := s.ValidationActions
	if len(actions) == 0 {
		actions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny} // Kyverno's ValidationActions()
	}
	_, aerrs := admissionpolicy.CheckValidationActions(actions, spec.Child("validationActions"))
	errs = append(errs, aerrs...)
	if len(errs) > 0 {
		return named, errs
	}
	if params := checkParams(s); len(params) > 0 {
		return named, params
	}
	res, rerrs := declareResources(k, kind)
	if len(rerrs) > 0 {
		return named, rerrs
	}
	main, cerrs := variant(k, kind, actions, res)
	if len(cerrs) > 0 {
		if lerrs := libraries(s); len(lerrs) > 0 {
			return named, lerrs
		}
		return named, cerrs
	}
	info := &Info{Kind: kind, Namespace: k.Namespace, resources: res, Admission: s.Evaluation == nil || s.Evaluation.Admission.on(), Background: s.Evaluation == nil || s.Evaluation.Background.on()}
	gens, aerrs := autogen(k, kind, actions, info)
	if len(aerrs) > 0 {
		return named, aerrs
	}
	return &Policy{Name: k.Name, Labels: k.Labels, Annotations: k.Annotations, Info: info, Main: main, Autogen: gens, References: declarations(res)}, nil
}

// variant is k as a ValidatingAdmissionPolicy with its binding, with the
// apiserver's defaults, compiled.
func variant(k *object, kind string, actions []admissionregistrationv1.ValidationAction, res *Resources) (Variant, field.ErrorList) {
	vap, binding, exceptions := asVAP(k, kind, actions)
	admissionpolicy.DefaultMatchResources(vap.Spec.MatchConstraints)
	validator, compiled, errs := Compile(vap, exceptions, res)
	return Variant{VAP: vap, Binding: binding, Validator: validator, Compiled: compiled}, errs
}

// asVAP is the ValidatingAdmissionPolicy and binding that decide as
// Kyverno's compiled policy (pkg/cel/policies/vpol/compiler/policy.go)
// decides: a validation without message says what Kyverno says ("CEL
// expression validation failed at index N"), and a
// NamespacedValidatingPolicy applies only to requests in its namespace
// (Kyverno's NamespacedPolicy predicate), as a first match condition. A
// policy reading Kyverno's exceptions variable reads it as params, which
// the evaluator sets to the values of the PolicyExceptions that apply
// (exceptions is true).
func asVAP(k *object, kind string, actions []admissionregistrationv1.ValidationAction) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, bool) {
	s := k.Spec
	exceptions := analysis.Uses(ExceptionsVariable, expressions(&s)...)
	if exceptions {
		s = renameExceptions(s)
	}
	fp := admissionregistrationv1.Fail
	if s.FailurePolicy != nil {
		fp = *s.FailurePolicy
	}
	validations := make([]admissionregistrationv1.Validation, len(s.Validations))
	for i, v := range s.Validations {
		if v.Message == "" { // a messageExpression is worded apart (Message)
			v.Message = "CEL expression validation failed at index " + strconv.Itoa(i)
		}
		validations[i] = v
	}
	var conditions []admissionregistrationv1.MatchCondition
	if kind == NamespacedValidatingPolicy {
		conditions = append(conditions, admissionregistrationv1.MatchCondition{
			Name: "kyverno-policy-namespace", Expression: "request.namespace == " + strconv.Quote(k.Namespace)})
	}
	conditions = append(conditions, s.MatchConditions...)
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: k.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: s.MatchConstraints.DeepCopy(),
			Validations:      validations,
			FailurePolicy:    &fp,
			AuditAnnotations: s.AuditAnnotations,
			MatchConditions:  conditions,
			Variables:        s.Variables,
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: k.Name},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: k.Name, ValidationActions: actions},
	}
	return vap, binding, exceptions
}

// libraryCall finds a call of one of Kyverno's own CEL libraries
// (pkg/cel/policies/vpol/compiler/compiler.go: globalContext, resource,
// image, imagedata, http, and the functions of user, hash, math, json,
// yaml, random, x509, time, transform, gzip), which the apiserver's
// libraries do not have.
var libraryCall = regexp.MustCompile(`(?:^|[^.?\w])(globalContext|resource|imagedata|http|image|json|yaml|hash|math|random|x509|time|transform|gzip|user)\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// libraryFunction finds a call of a global function of Kyverno's libraries
// (user: parseServiceAccount; image: image, parseImageReference).
var libraryFunction = regexp.MustCompile(`(?:^|[^.?\w])(parseServiceAccount|parseImageReference|image)\s*\(`)

// libraries names, for a policy the apiserver's compiler refused,
// every expression that calls a Kyverno CEL library, rather than leaving
// the compiler to say the name is undeclared: all but resource.Get and
// resource.List, which tollgate has (resource.go).
func libraries(s *spec) field.ErrorList {
	var errs field.ErrorList
	check := func(p *field.Path, expr string) {
		if m := libraryFunction.FindStringSubmatch(expr); m != nil {
			errs = append(errs, field.Invalid(p, strings.TrimSpace(expr),
				fmt.Sprintf("calls %s, of Kyverno's CEL libraries, which tollgate does not have", m[1])))
		} else if m := libraryCall.FindStringSubmatch(expr); m != nil && (m[1] != "resource" || !slices.Contains([]string{"Get", "get", "List", "list"}, m[2])) {
			errs = append(errs, field.Invalid(p, strings.TrimSpace(expr),
				fmt.Sprintf("calls %s.%s, of Kyverno's CEL libraries, which tollgate does not have", m[1], m[2])))
		}
	}
	eachExpression(s, check)
	return errs
}

func prefixed(versions []string) []string {
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = Group + "/" + v
	}
	return out
}

// eachExpression calls f with each CEL expression of a Kyverno
// policy and its field path.
func eachExpression(s *spec, f func(*field.Path, string)) {
	spec := field.NewPath("spec")
	for i, c := range s.MatchConditions {
		f(spec.Child("matchConditions").Index(i).Child("expression"), c.Expression)
	}
	for i, v := range s.Variables {
		f(spec.Child("variables").Index(i).Child("expression"), v.Expression)
	}
	for i, v := range s.Validations {
		f(spec.Child("validations").Index(i).Child("expression"), v.Expression)
		f(spec.Child("validations").Index(i).Child("messageExpression"), v.MessageExpression)
	}
	for i, a := range s.AuditAnnotations {
		f(spec.Child("auditAnnotations").Index(i).Child("valueExpression"), a.ValueExpression)
	}
}
