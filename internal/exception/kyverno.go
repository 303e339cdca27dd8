package exception

// Kyverno's PolicyException of policies.kyverno.io, which lifts Kyverno
// ValidatingPolicies and NamespacedValidatingPolicies (Kyverno's
// config/crds/policies.kyverno.io/policies.kyverno.io_policyexceptions.yaml,
// at the commit package kyverno names; the same schema in v1alpha1, v1beta1 and v1; applied by
// pkg/cel/policies/vpol/compiler/policy.go). It is read here, strictly; the
// policy package compiles it with the policies it names, and the
// ValidatingAdmissionPolicy evaluator applies it.

import (
	"encoding/json"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// KyvernoGroup is the API group of Kyverno's PolicyException for CEL policies.
const KyvernoGroup = "policies.kyverno.io"

// kyvernoVersions are the versions Kyverno serves its PolicyException in.
var kyvernoVersions = []string{"v1alpha1", "v1beta1", "v1"}

// Kyverno is what a policies.kyverno.io PolicyException says.
type Kyverno struct {
	// Namespace is the exception's: Kyverno applies exceptions of every
	// namespace (its default, without --exceptionNamespace); it names the
	// exception in results ("namespace/name").
	Namespace string
	// PolicyRefs name the policies lifted, by kind and name.
	PolicyRefs []KyvernoPolicyRef
	// MatchConditions must all hold for the exception to apply (none: it
	// applies to everything the policy matches).
	MatchConditions []admissionregistrationv1.MatchCondition
	// Images and AllowedValues are what the policy's expressions read as
	// exceptions.allowedImages and exceptions.allowedValues. An exception
	// with neither lifts the policy whole.
	Images, AllowedValues []string
	// ReportResult is skip (the default) or pass: the result of a policy lifted whole.
	ReportResult string
}

// KyvernoPolicyRef names a policy by kind and name.
type KyvernoPolicyRef struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// kyvernoDocument is the PolicyException as its CRD declares it.
type kyvernoDocument struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		PolicyRefs      []KyvernoPolicyRef                       `json:"policyRefs"`
		MatchConditions []admissionregistrationv1.MatchCondition `json:"matchConditions,omitempty"`
		Images          []string                                 `json:"images,omitempty"`
		AllowedValues   []string                                 `json:"allowedValues,omitempty"`
		ReportResult    string                                   `json:"reportResult,omitempty"`
		EvaluationMode  string                                   `json:"evaluationMode,omitempty"`
		ExpiresAt       *metav1.Time                             `json:"expiresAt,omitempty"`
		Properties      map[string]string                        `json:"properties,omitempty"`
	} `json:"spec"`
}

// IsKyverno tells whether a JSON document is a Kyverno PolicyException
// of policies.kyverno.io, of any version.
func IsKyverno(js []byte) bool {
	var tm metav1.TypeMeta
	if json.Unmarshal(js, &tm) != nil || tm.Kind != Kind {
		return false
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	return err == nil && gv.Group == KyvernoGroup
}

// DecodeKyverno reads a Kyverno PolicyException strictly (unknown and
// duplicate fields are errors) and validates it as its CRD and Kyverno's
// PolicyExceptionSpec.Validate do. Its matchConditions compile with the
// policies it names.
func DecodeKyverno(js []byte) (*Exception, field.ErrorList) {
	var d kyvernoDocument
	se, err := sigsjson.UnmarshalStrict(js, &d, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath(""), "", err.Error())}
	}
	e := &Exception{APIVersion: d.APIVersion, Kind: d.Kind,
		Metadata: Metadata{Name: d.Name, Labels: d.Labels, Annotations: d.Annotations},
		Spec:     Spec{ExpiresAt: d.Spec.ExpiresAt, Reason: d.Spec.Properties["reason"]},
		Kyverno: &Kyverno{Namespace: d.Namespace, PolicyRefs: d.Spec.PolicyRefs, MatchConditions: d.Spec.MatchConditions,
			Images: d.Spec.Images, AllowedValues: d.Spec.AllowedValues, ReportResult: d.Spec.ReportResult}}
	var errs field.ErrorList
	for _, s := range se {
		errs = append(errs, field.Invalid(field.NewPath(""), "", s.Error()))
	}
	if len(errs) > 0 {
		return e, errs
	}
	gv, _ := schema.ParseGroupVersion(d.APIVersion)
	if !slices.Contains(kyvernoVersions, gv.Version) {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), d.APIVersion,
			[]string{KyvernoGroup + "/v1alpha1", KyvernoGroup + "/v1beta1", KyvernoGroup + "/v1"}))
	}
	name := field.NewPath("metadata", "name")
	if d.Name == "" {
		errs = append(errs, field.Required(name, "an exception needs a name"))
	}
	for _, msg := range validation.IsDNS1123Subdomain(d.Name) {
		if d.Name != "" {
			errs = append(errs, field.Invalid(name, d.Name, msg))
		}
	}
	if d.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(d.Namespace) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), d.Namespace, msg))
		}
	}
	spec := field.NewPath("spec")
	if len(d.Spec.PolicyRefs) == 0 {
		errs = append(errs, field.Invalid(spec.Child("policyRefs"), d.Spec.PolicyRefs, "must specify at least one policy ref"))
	}
	for i, r := range d.Spec.PolicyRefs {
		if r.Name == "" {
			errs = append(errs, field.Invalid(spec.Child("policyRefs").Index(i).Child("name"), r.Name, "must specify policy name"))
		}
		if r.Kind == "" {
			errs = append(errs, field.Invalid(spec.Child("policyRefs").Index(i).Child("kind"), r.Kind, "must specify policy kind"))
		}
	}
	for i, c := range d.Spec.MatchConditions {
		p := spec.Child("matchConditions").Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		if c.Expression == "" {
			errs = append(errs, field.Required(p.Child("expression"), ""))
		}
	}
	switch d.Spec.ReportResult {
	case "":
		e.Kyverno.ReportResult = "skip" // the CRD's default
	case "skip", "pass":
	default:
		errs = append(errs, field.NotSupported(spec.Child("reportResult"), d.Spec.ReportResult, []string{"skip", "pass"}))
	}
	if m := d.Spec.EvaluationMode; m != "" && m != "Kubernetes" {
		errs = append(errs, field.NotSupported(spec.Child("evaluationMode"), m, []string{"Kubernetes"}))
	}
	return e, errs
}

// Key is a Kyverno exception's namespace/name, as Kyverno names it in
// results (client-go's MetaNamespaceKeyFunc).
func (k *Kyverno) Key(name string) string {
	if k.Namespace == "" {
		return name
	}
	return k.Namespace + "/" + name
}

// Whole tells whether the exception lifts a policy whole: it gives no
// images and no allowed values.
func (k *Kyverno) Whole() bool { return len(k.Images) == 0 && len(k.AllowedValues) == 0 }

// Names tells whether the exception names the policy of this kind and name.
func (k *Kyverno) Names(kind, name string) bool {
	return slices.Contains(k.PolicyRefs, KyvernoPolicyRef{Name: name, Kind: kind})
}

// kyvernoString is how a Kyverno exception names itself in errors and lint.
func (e *Exception) kyvernoString() string {
	return fmt.Sprintf("%s PolicyException %q (%s)", KyvernoGroup, e.Kyverno.Key(e.Name()), e.Source)
}
