package policy

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

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
	"github.com/tollgate-dev/tollgate/internal/kyverno"
)

// KyvernoGroup is the API group of Kyverno's CEL policies.
const KyvernoGroup = "policies.kyverno.io"

// The Kyverno kinds tollgate reads, and the versions Kyverno serves each in
// (Kyverno's config/crds/policies.kyverno.io/, at the commit package
// kyverno names: ValidatingPolicy v1alpha1, v1beta1, v1; NamespacedValidatingPolicy
// v1beta1, v1; the same schema in every version).
const (
	KyvernoValidatingPolicy           = "ValidatingPolicy"
	KyvernoNamespacedValidatingPolicy = "NamespacedValidatingPolicy"
)

var kyvernoVersions = map[string][]string{
	KyvernoValidatingPolicy:           {"v1alpha1", "v1beta1", "v1"},
	KyvernoNamespacedValidatingPolicy: {"v1beta1", "v1"},
}

// kyvernoPolicy is a ValidatingPolicy or NamespacedValidatingPolicy, as
// github.com/kyverno/api declares it (api/policies.kyverno.io/v1beta1/
// validating_policy.go), with only the fields its CRD declares.
type kyvernoPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              kyvernoSpec `json:"spec"`
	// Status is written by Kyverno's controllers; kept as read, unused.
	Status json.RawMessage `json:"status,omitempty"`
}

type kyvernoSpec struct {
	MatchConstraints     *admissionregistrationv1.MatchResources    `json:"matchConstraints,omitempty"`
	Validations          []admissionregistrationv1.Validation       `json:"validations,omitempty"`
	FailurePolicy        *admissionregistrationv1.FailurePolicyType `json:"failurePolicy,omitempty"`
	AuditAnnotations     []admissionregistrationv1.AuditAnnotation  `json:"auditAnnotations,omitempty"`
	MatchConditions      []admissionregistrationv1.MatchCondition   `json:"matchConditions,omitempty"`
	Variables            []admissionregistrationv1.Variable         `json:"variables,omitempty"`
	Autogen              *kyvernoAutogenConfig                      `json:"autogen,omitempty"`
	ValidationActions    []admissionregistrationv1.ValidationAction `json:"validationActions,omitempty"`
	WebhookConfiguration *struct {
		TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	} `json:"webhookConfiguration,omitempty"`
	Evaluation *kyvernoEvaluation `json:"evaluation,omitempty"`
}

type kyvernoAutogenConfig struct {
	PodControllers *struct {
		Controllers []string `json:"controllers,omitempty"`
	} `json:"podControllers,omitempty"`
	ValidatingAdmissionPolicy *struct {
		Enabled *bool `json:"enabled,omitempty"`
	} `json:"validatingAdmissionPolicy,omitempty"`
}

type kyvernoEvaluation struct {
	Admission  *kyvernoEnabled `json:"admission,omitempty"`
	Background *kyvernoEnabled `json:"background,omitempty"`
	// Mode is Kubernetes (the default), JSON, HTTP or Envoy.
	Mode string `json:"mode,omitempty"`
}

type kyvernoEnabled struct {
	Enabled *bool `json:"enabled,omitempty"`
}

func (e *kyvernoEnabled) on() bool { return e == nil || e.Enabled == nil || *e.Enabled }

// Kyverno is what a VAP that came from a Kyverno policy keeps of it.
type Kyverno struct {
	// Kind is ValidatingPolicy or NamespacedValidatingPolicy.
	Kind string
	// Namespace is a NamespacedValidatingPolicy's: it applies only there.
	Namespace string
	// Admission and Background are evaluation.admission.enabled and
	// evaluation.background.enabled (both true by default).
	Admission, Background bool
	// controllers: see AutogenControllers.
	controllers []string
	// resources are what it reads through Kyverno's resource library
	// (kyvernoresource.go), nil for nothing; its autogen policies read
	// the same.
	resources *kyverno.Resources
	// Exceptions are the policies.kyverno.io PolicyExceptions naming the
	// policy, in load order (kyvernoexception.go); its autogen policies
	// share them.
	Exceptions []*KyvernoException
}

// isKyverno tells whether a document is of Kyverno's policies.kyverno.io
// group, and its kind and version.
func isKyverno(js []byte) (kind, version string, ok bool) {
	var tm metav1.TypeMeta
	if json.Unmarshal(js, &tm) != nil {
		return "", "", false
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil || gv.Group != KyvernoGroup {
		return "", "", false
	}
	return tm.Kind, gv.Version, true
}

// decodeKyverno reads a Kyverno ValidatingPolicy or
// NamespacedValidatingPolicy strictly and compiles it as a
// ValidatingAdmissionPolicy with one binding, named as the policy, that
// selects everything its matchConstraints select, with its
// validationActions. Every other kind of the group is refused.
func decodeKyverno(kind, version string, js []byte) (*Policy, field.ErrorList) {
	versions, known := kyvernoVersions[kind]
	if !known {
		return nil, field.ErrorList{field.NotSupported(field.NewPath("kind"), kind, []string{KyvernoValidatingPolicy, KyvernoNamespacedValidatingPolicy})}
	}
	served := false
	for _, v := range versions {
		served = served || v == version
	}
	if !served {
		return nil, field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), KyvernoGroup+"/"+version, prefixed(versions))}
	}
	k := &kyvernoPolicy{}
	if errs := decodeStrict(js, k); len(errs) > 0 {
		return nil, errs
	}
	named := &Policy{Metadata: Metadata{Name: k.Name}}
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validName(k.Name)...)
	namespaced := kind == KyvernoNamespacedValidatingPolicy
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
	seen := map[admissionregistrationv1.ValidationAction]bool{}
	for i, a := range actions {
		p := spec.Child("validationActions").Index(i)
		switch {
		case a != admissionregistrationv1.Deny && a != admissionregistrationv1.Warn && a != admissionregistrationv1.Audit:
			errs = append(errs, field.NotSupported(p, a, []string{"Deny", "Warn", "Audit"}))
		case seen[a]:
			errs = append(errs, field.Duplicate(p, a))
		}
		seen[a] = true
	}
	if len(errs) > 0 {
		return named, errs
	}
	if params := kyvernoParams(s); len(params) > 0 {
		return named, params
	}
	res, rerrs := kyvernoResources(k, kind)
	if len(rerrs) > 0 {
		return named, rerrs
	}
	vap, binding, exceptions := kyvernoVAP(k, kind, actions)
	defaultMatchResources(vap.Spec.MatchConstraints)
	validator, kc, cerrs := kyverno.Compile(vap, exceptions, res)
	if len(cerrs) > 0 {
		if lerrs := kyvernoLibraries(s); len(lerrs) > 0 {
			return named, lerrs
		}
		return named, cerrs
	}
	info := &Kyverno{Kind: kind, Namespace: k.Namespace, resources: res, Admission: s.Evaluation == nil || s.Evaluation.Admission.on(), Background: s.Evaluation == nil || s.Evaluation.Background.on()}
	autogen, aerrs := kyvernoAutogen(k, kind, actions, info)
	if len(aerrs) > 0 {
		return named, aerrs
	}
	return &Policy{
		Metadata: Metadata{Name: k.Name, Labels: k.Labels, Annotations: k.Annotations},
		Spec:     Spec{FailurePolicy: failurePolicyOf(*vap.Spec.FailurePolicy)},
		VAP: &VAP{Policy: vap, Bindings: []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{binding}, Validator: validator,
			Kyverno: info, KyvernoCompiled: kc, Autogen: autogen},
		compiled: compiled{references: kyvernoDeclarations(res)},
	}, nil
}

// kyvernoVAP is the ValidatingAdmissionPolicy and binding that decide as
// Kyverno's compiled policy (pkg/cel/policies/vpol/compiler/policy.go)
// decides: a validation without message says what Kyverno says ("CEL
// expression validation failed at index N"), and a
// NamespacedValidatingPolicy applies only to requests in its namespace
// (Kyverno's NamespacedPolicy predicate), as a first match condition. A
// policy reading Kyverno's exceptions variable reads it as params, which
// the evaluator sets to the values of the PolicyExceptions that apply
// (exceptions is true).
func kyvernoVAP(k *kyvernoPolicy, kind string, actions []admissionregistrationv1.ValidationAction) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, bool) {
	s := k.Spec
	exceptions := analysis.Uses(KyvernoExceptionsVariable, kyvernoExpressions(&s)...)
	if exceptions {
		s = renameExceptions(s)
	}
	fp := admissionregistrationv1.Fail
	if s.FailurePolicy != nil {
		fp = *s.FailurePolicy
	}
	validations := make([]admissionregistrationv1.Validation, len(s.Validations))
	for i, v := range s.Validations {
		if v.Message == "" { // a messageExpression is worded apart (kyverno.Message)
			v.Message = "CEL expression validation failed at index " + strconv.Itoa(i)
		}
		validations[i] = v
	}
	var conditions []admissionregistrationv1.MatchCondition
	if kind == KyvernoNamespacedValidatingPolicy {
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

// kyvernoLibraryCall finds a call of one of Kyverno's own CEL libraries
// (pkg/cel/policies/vpol/compiler/compiler.go: globalContext, resource,
// image, imagedata, http, and the functions of user, hash, math, json,
// yaml, random, x509, time, transform, gzip), which the apiserver's
// libraries do not have.
var kyvernoLibraryCall = regexp.MustCompile(`(?:^|[^.?\w])(globalContext|resource|imagedata|http|image|json|yaml|hash|math|random|x509|time|transform|gzip|user)\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// kyvernoFunction finds a call of a global function of Kyverno's libraries
// (user: parseServiceAccount; image: image, parseImageReference).
var kyvernoFunction = regexp.MustCompile(`(?:^|[^.?\w])(parseServiceAccount|parseImageReference|image)\s*\(`)

// kyvernoLibraries names, for a policy the apiserver's compiler refused,
// every expression that calls a Kyverno CEL library, rather than leaving
// the compiler to say the name is undeclared: all but resource.Get and
// resource.List, which tollgate has (kyvernoresource.go).
func kyvernoLibraries(s *kyvernoSpec) field.ErrorList {
	var errs field.ErrorList
	check := func(p *field.Path, expr string) {
		if m := kyvernoFunction.FindStringSubmatch(expr); m != nil {
			errs = append(errs, field.Invalid(p, strings.TrimSpace(expr),
				fmt.Sprintf("calls %s, of Kyverno's CEL libraries, which tollgate does not have", m[1])))
		} else if m := kyvernoLibraryCall.FindStringSubmatch(expr); m != nil && (m[1] != "resource" || !slices.Contains([]string{"Get", "get", "List", "list"}, m[2])) {
			errs = append(errs, field.Invalid(p, strings.TrimSpace(expr),
				fmt.Sprintf("calls %s.%s, of Kyverno's CEL libraries, which tollgate does not have", m[1], m[2])))
		}
	}
	eachKyvernoExpression(s, check)
	return errs
}

func prefixed(versions []string) []string {
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = KyvernoGroup + "/" + v
	}
	return out
}

// eachKyvernoExpression calls f with each CEL expression of a Kyverno
// policy and its field path.
func eachKyvernoExpression(s *kyvernoSpec, f func(*field.Path, string)) {
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
