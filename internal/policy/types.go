package policy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/open-policy-agent/frameworks/constraint/pkg/core/templates"

	"github.com/tollgate-dev/tollgate/internal/gatekeeper"
	"github.com/tollgate-dev/tollgate/internal/mutatingpolicy"
	"github.com/tollgate-dev/tollgate/internal/references"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// APIVersion and Kind identify a policy document.
const (
	APIVersion = tollgateGroup + "/v1alpha1"
	Kind       = "Policy"
)

// FailurePolicy is what the apiserver does when tollgate cannot answer.
type FailurePolicy string

// The two failure policies of admissionregistration.k8s.io/v1.
const (
	Fail   FailurePolicy = "Fail"
	Ignore FailurePolicy = "Ignore"
)

// Policy is one tollgate.dev/v1alpha1 Policy document.
type Policy struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`

	// Source says where the policy was read from, for errors and logs.
	Source Source `json:"-"`
	// compiled holds what load time derived from Spec; see compile.go.
	compiled compiled
	// VAP is set for a Kubernetes ValidatingAdmissionPolicy (validatingpolicy.go).
	VAP *validatingpolicy.Policy
	// binding is a ValidatingAdmissionPolicyBinding until NewSet attaches it.
	binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// MAP is set for a Kubernetes MutatingAdmissionPolicy (mutatingpolicy.go).
	MAP *mutatingpolicy.Policy
	// Gatekeeper is set for a Gatekeeper Constraint (gatekeeper.go).
	Gatekeeper *Constraint
	// gkTemplate is a ConstraintTemplate document, joined to its
	// Constraints by NewSet and then left out of the set.
	gkTemplate *templates.ConstraintTemplate
	// gkConfig is Gatekeeper's Config, applied to the set's Constraints by
	// NewSet and then left out of the set.
	gkConfig *gatekeeper.Config
	// gkSyncs are the kinds a Gatekeeper SyncSet syncs, joined to the
	// Config by NewSet; the SyncSet is then left out of the set.
	gkSyncs []schema.GroupVersionKind
	// mapBinding is a MutatingAdmissionPolicyBinding until NewSet attaches it.
	mapBinding *admissionregistrationv1.MutatingAdmissionPolicyBinding
}

// Source is the file and document (1-based) a policy came from, or the
// cluster's API (a ValidatingAdmissionPolicy the apiserver stores; see
// cluster.go).
type Source struct {
	File     string
	Document int
	// Cluster: read from the cluster's API, not from tollgate's config.
	Cluster bool
}

// Metadata names a policy. Labels and annotations are kept for the user's own use.
type Metadata struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Spec is what a policy matches and the one action it takes.
type Spec struct {
	Match         Match         `json:"match"`
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`
	Validate      *Validate     `json:"validate,omitempty"`
	Inject        *Inject       `json:"inject,omitempty"`
	Mutate        *Mutate       `json:"mutate,omitempty"`
	// VerifyImages requires the images of matched workloads to be signed
	// (images.go).
	VerifyImages *VerifyImages `json:"verifyImages,omitempty"`
	// References are the other objects the policy reads (its CEL reads
	// them as references.<name>); see package references.
	References []references.Declaration `json:"references,omitempty"`
}

// Mutate changes matched objects: labels and annotations set when absent
// (or always, with Overwrite), then JSON Patches computed by CEL.
type Mutate struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Overwrite   bool              `json:"overwrite,omitempty"`
	Patches     []PatchExpression `json:"patches,omitempty"`
}

// PatchExpression is a CEL expression returning a list of JSONPatch values,
// as in a MutatingAdmissionPolicy's jsonPatch.
type PatchExpression struct {
	Expression string `json:"expression"`
}

// Match selects the requests a policy concerns. The apiserver applies it first
// (it becomes the webhook's rules and selectors); the server checks it again.
type Match struct {
	// Resources are plural resource names, "group/resource" outside the core group.
	Resources         []string              `json:"resources"`
	Operations        []string              `json:"operations,omitempty"`
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	ObjectSelector    *metav1.LabelSelector `json:"objectSelector,omitempty"`
	// ExcludeNamespaces are left alone in addition to the built-in exclusions.
	ExcludeNamespaces []string `json:"excludeNamespaces,omitempty"`
	// Conditions are CEL expressions, like a webhook's matchConditions: all
	// must be true, else the policy is skipped.
	Conditions []NamedExpression `json:"conditions,omitempty"`
	// PodControllers makes a policy about Pods check the Pod templates of
	// Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs and
	// ReplicationControllers.
	PodControllers bool `json:"podControllers,omitempty"`
}

// NamedExpression is a named CEL expression: a condition or a variable.
type NamedExpression struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// Expression is a CEL rule, as in a ValidatingAdmissionPolicy's validations.
type Expression struct {
	// Name, optional, is how a PolicyException names the rule to exempt.
	Name              string `json:"name,omitempty"`
	Expression        string `json:"expression"`
	Message           string `json:"message,omitempty"`
	MessageExpression string `json:"messageExpression,omitempty"`
	Reason            string `json:"reason,omitempty"`
}

// ValidateAction is what a violated validation does.
type ValidateAction string

// The actions of a validation.
const (
	// Deny refuses the request with the message.
	Deny ValidateAction = "Deny"
	// Warn allows it, with the message as a warning the user sees.
	Warn ValidateAction = "Warn"
	// Audit allows it, with the message as an audit annotation and a log line.
	Audit ValidateAction = "Audit"
)

// Validate checks matched objects: required labels, CEL expressions, or both.
type Validate struct {
	// Action is Deny (default), Warn or Audit.
	Action ValidateAction `json:"action,omitempty"`
	Labels []LabelRule    `json:"labels,omitempty"`
	// Message replaces the default explanation of a label violation.
	Message     string            `json:"message,omitempty"`
	Variables   []NamedExpression `json:"variables,omitempty"`
	Expressions []Expression      `json:"expressions,omitempty"`
}

// LabelRule requires a label; with Values, one of those values.
type LabelRule struct {
	Key    string   `json:"key"`
	Values []string `json:"values,omitempty"`
}

// Inject is what an injection policy adds to a Pod. The items are the
// Kubernetes types themselves, so every field a user writes is kept.
type Inject struct {
	Containers       []corev1.Container            `json:"containers,omitempty"`
	InitContainers   []corev1.Container            `json:"initContainers,omitempty"`
	Volumes          []corev1.Volume               `json:"volumes,omitempty"`
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// OptOut limits who may refuse the injection with the Pod annotation
	// tollgate.dev/inject: "false". Without it, every Pod may.
	OptOut *OptOut `json:"optOut,omitempty"`
}

// OptOut is where a Pod's opt-out annotation is honoured. A Pod's author
// controls the annotation; who labels namespaces decides where it counts.
type OptOut struct {
	// Disabled ignores the annotation everywhere: the policy always injects.
	Disabled bool `json:"disabled,omitempty"`
	// NamespaceSelector honours the annotation only in namespaces whose
	// labels match it.
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// Name is the policy's name.
func (p *Policy) Name() string { return p.Metadata.Name }

// IsInjection tells whether the policy injects into Pods.
func (p *Policy) IsInjection() bool { return p.Spec.Inject != nil }

// IsMutation tells whether the policy mutates (sets labels, annotations, patches).
func (p *Policy) IsMutation() bool { return p.Spec.Mutate != nil }
