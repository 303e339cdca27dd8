package engine

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Whether a policy applies to a request is decided in one place per kind of
// policy, each with the apiserver's own matching, and turned into a result
// here, by notApplicable alone:
//
//   - every policy: the request's namespace is exempt (the system
//     namespaces, tollgate's own, --exclude-namespaces), as at admission;
//   - tollgate policies: Engine.matching (resources, operations, selectors),
//     then their conditions (validate.go, mutate.go);
//   - ValidatingAdmissionPolicies: validatingpolicy.Evaluate (matchConstraints, a
//     binding selecting the request, a param, matchConditions), read by
//     validateVAP;
//   - MutatingAdmissionPolicies: mutatingpolicy.Mutate, read by mutateMAP.
//
// A policy that does not apply gives a Skip result with NotApplicable set
// and the reason; it is not among the response's Policies (metrics count
// those). Reports and tests read Result.Applies: such a result is shown
// only where the user asks for skips, never as a pass.

// notApplicable is the result of a policy that does not apply, and why.
func notApplicable(policy, why string) Result {
	return Result{Policy: policy, Outcome: Skip, Message: why, NotApplicable: true}
}

// notApplicableAll answers a request none of the group's policies applies
// to: allowed, unchanged.
func notApplicableAll(g *policy.Group, why string) Evaluation {
	ev := Evaluation{Response: admission.Allowed()}
	for _, p := range g.Policies {
		ev.Results = append(ev.Results, notApplicable(p.Name(), why))
	}
	return ev
}

// applied names the policies of results that applied and were not lifted
// by an exception: the policies that acted on the request.
func applied(results []Result) []string {
	var out []string
	for _, r := range results {
		if r.Outcome != Skip {
			out = append(out, r.Policy)
		}
	}
	return out
}

// missed says why a tollgate policy does not match a request (Matches
// false): the namespace it excludes, its objectSelector, or else its
// resources and operations.
func missed(p *policy.Policy, t *policy.Target) string {
	m := p.Spec.Match
	if t.SubResource == "" && slices.Contains(m.ExcludeNamespaces, t.Namespace) {
		return "namespace " + t.Namespace + " is excluded by the policy"
	}
	if t.SubResource == "" && m.ObjectSelector != nil && p.MatchesResource(t.Resource) {
		sel, err := metav1.LabelSelectorAsSelector(m.ObjectSelector)
		if err == nil && !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) && (t.OldLabels == nil || !sel.Matches(labels.Set(t.OldLabels))) {
			return "objectSelector does not select the object's labels"
		}
	}
	return "does not match the request"
}
