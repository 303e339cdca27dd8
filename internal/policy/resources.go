package policy

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MayMatchResource tells whether the policy, of whatever kind, may concern
// objects of the resource: a tollgate policy's resources (and Pod
// controllers), a ValidatingAdmissionPolicy's resource rules (a binding
// only narrows them). Selectors and conditions are left out: it answers
// "could ever", for audits and lint.
func (p *Policy) MayMatchResource(gr schema.GroupResource) bool {
	if p.VAP == nil {
		return p.MatchesResource(gr)
	}
	mc := p.VAP.MatchConstraints()
	if mc == nil {
		return false
	}
	for _, r := range mc.ResourceRules {
		if (slices.Contains(r.APIGroups, "*") || slices.Contains(r.APIGroups, gr.Group)) &&
			(slices.Contains(r.Resources, "*") || slices.Contains(r.Resources, gr.Resource)) {
			return true
		}
	}
	return false
}
