package policy

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SystemNamespaces are never injected into nor validated, whatever a policy says.
var SystemNamespaces = []string{"kube-system", "kube-public", "kube-node-lease"}

// Target is what matching needs to know of a request.
type Target struct {
	Resource    schema.GroupResource
	SubResource string
	Operation   string
	Namespace   string
	// Labels are the object's labels; OldLabels those of oldObject (UPDATE, DELETE).
	Labels, OldLabels map[string]string
}

// Matches tells whether the policy concerns the request. The namespaceSelector
// is the apiserver's to apply (it knows namespace labels); everything else is
// checked here again, so a misconfigured webhook cannot widen a policy.
func (p *Policy) Matches(t *Target) bool {
	c := &p.compiled
	if t.SubResource != "" || c.excluded.Has(t.Namespace) {
		return false
	}
	if !c.operations.Has(t.Operation) && !c.operations.Has("*") {
		return false
	}
	if !p.MatchesResource(t.Resource) {
		return false
	}
	// Like the apiserver: the object selector matches if either version matches.
	sel := c.objectSelector
	return sel.Empty() || sel.Matches(labels.Set(t.Labels)) || (t.OldLabels != nil && sel.Matches(labels.Set(t.OldLabels)))
}

// MatchesNamespace evaluates the namespaceSelector against a namespace's
// labels. The apiserver does this before calling tollgate; tollgate does it
// itself only where it knows namespace labels (offline checks).
func (p *Policy) MatchesNamespace(nsLabels map[string]string) bool {
	return p.compiled.nsSelector.Matches(labels.Set(nsLabels))
}

// AllowsOptOut tells whether a Pod in a namespace with these labels may
// refuse the policy's injection with its opt-out annotation.
func (p *Policy) AllowsOptOut(nsLabels map[string]string) bool {
	return p.compiled.optOut == nil || p.compiled.optOut.Matches(labels.Set(nsLabels))
}

// MatchesResource tells whether the policy names the resource, wildcards
// included, or it is a Pod controller and the policy checks their templates.
func (p *Policy) MatchesResource(r schema.GroupResource) bool {
	for _, gr := range p.compiled.resources {
		if (gr.Group == "*" || gr.Group == r.Group) && (gr.Resource == "*" || gr.Resource == r.Resource) {
			return true
		}
	}
	return p.Spec.Match.PodControllers && IsPodController(r)
}

// PodControllers are the resources whose Pod templates podControllers checks.
var PodControllers = []schema.GroupResource{
	{Group: "apps", Resource: "deployments"}, {Group: "apps", Resource: "replicasets"},
	{Group: "apps", Resource: "statefulsets"}, {Group: "apps", Resource: "daemonsets"},
	{Group: "batch", Resource: "jobs"}, {Group: "batch", Resource: "cronjobs"},
	{Group: "", Resource: "replicationcontrollers"},
}

// IsPodController tells whether r holds a Pod template.
func IsPodController(r schema.GroupResource) bool {
	for _, pc := range PodControllers {
		if pc == r {
			return true
		}
	}
	return false
}
