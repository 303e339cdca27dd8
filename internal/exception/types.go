// Package exception owns PolicyExceptions: documents, kept beside the
// policies, that exempt named objects from named policies, with a reason
// and an optional expiry. It decodes and validates them, and answers, at a
// time given by an injected clock, which exception (if any) exempts an
// object from a policy. The engine asks it once per policy and request, so
// admission, check, test, review and audit apply exceptions alike.
package exception

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// APIVersion and Kind identify an exception document.
const (
	APIVersion = "tollgate.dev/v1alpha1"
	Kind       = "PolicyException"
)

// Exception is one tollgate.dev/v1alpha1 PolicyException.
type Exception struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`

	// Source is where it was read from ("file: document n"), for errors and lint.
	Source string `json:"-"`
	// Kyverno is set for a policies.kyverno.io PolicyException
	// (kyverno.go), which lifts Kyverno policies only; its Spec has only
	// ExpiresAt, and Reason from its properties' reason.
	Kyverno *Kyverno `json:"-"`
	// selector is Spec.Match.Selector, compiled.
	selector labels.Selector
}

// Metadata names an exception.
type Metadata struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Spec says which policies the exception lifts, for which objects, why, and
// until when.
type Spec struct {
	// Policies are the names of the policies (tollgate policies and
	// ValidatingAdmissionPolicies) the matched objects are exempt from.
	Policies []string `json:"policies"`
	// Rules narrow the exception to some rules of tollgate policies: a label
	// rule by its key, a CEL expression by its name. The objects stay subject
	// to every other rule. Empty: the policies are lifted whole. A policy
	// that has none of these rules (a ValidatingAdmissionPolicy has no named
	// rules) is not lifted at all.
	Rules []string `json:"rules,omitempty"`
	// Match selects the exempt objects.
	Match Match `json:"match"`
	// Reason is why: required, shown wherever the exception is applied.
	Reason string `json:"reason"`
	// ExpiresAt ends the exception (RFC 3339); from then on it is applied nowhere.
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
}

// Match selects objects. Every field given must match; an empty field
// matches everything, but at least one field must be given.
type Match struct {
	// Namespaces are namespace names; * and ? are wildcards.
	Namespaces []string `json:"namespaces,omitempty"`
	// Names are object names; * and ? are wildcards.
	Names []string `json:"names,omitempty"`
	// Kinds are Kind (any API group) or group/Kind, e.g. apps/DaemonSet.
	Kinds []string `json:"kinds,omitempty"`
	// Selector matches the object's labels.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// Name is the exception's name.
func (e *Exception) Name() string {
	if e == nil {
		return ""
	}
	return e.Metadata.Name
}

func (e *Exception) String() string {
	if e.Kyverno != nil {
		return e.kyvernoString()
	}
	return fmt.Sprintf("PolicyException %q (%s)", e.Name(), e.Source)
}

// Message is what a result exempted by e says.
func (e *Exception) Message() string {
	return fmt.Sprintf("exempted by PolicyException %s: %s", e.Name(), e.Spec.Reason)
}
