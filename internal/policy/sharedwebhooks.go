package policy

import (
	"encoding/json"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// shareWebhooks puts the binding webhook entries of ValidatingAdmissionPolicies
// whose webhook settings agree into one entry, so that the apiserver calls
// tollgate once for them, not once per policy. The settings are the
// failurePolicy, the matchPolicy and both selectors (the policy's ANDed
// with the bindings'). The entry's rules are the union of the policies'
// resource rules. With equal selectors, that union sends exactly the
// requests the separate entries would: nothing more.
//
// The shared entry stays in the first policy's group. It serves every
// policy it holds, each with its own bindings, resource rules, exclusions
// and failurePolicy applied inside. The entries it replaced leave their
// groups. A Kyverno policy with admission off has no webhook and shares
// none. MutatingAdmissionPolicies are left alone: their webhooks' order is
// their order of mutation.
func shareWebhooks(groups []*Group) {
	first := map[string]*BindingWebhook{}
	for _, g := range groups {
		if g.Kind != GroupVAP || !admits(g.Policies[0]) {
			continue
		}
		kept := g.BindingWebhooks[:0]
		for _, w := range g.BindingWebhooks {
			k := sharingKey(g.Policies[0], w)
			if into, ok := first[k]; ok {
				into.Group.Policies = append(into.Group.Policies, w.Group.Policies...)
				continue
			}
			first[k] = w
			kept = append(kept, w)
		}
		g.BindingWebhooks = kept
	}
}

// admits tells whether p is enforced at admission: all but a Kyverno
// policy with evaluation.admission.enabled false.
func admits(p *Policy) bool {
	return p.VAP == nil || p.VAP.Kyverno == nil || p.VAP.Kyverno.Admission
}

// sharingKey is equal for the entries of p (a ValidatingAdmissionPolicy)
// that can be one webhook entry.
func sharingKey(p *Policy, w *BindingWebhook) string {
	var mp *admissionregistrationv1.MatchPolicyType
	if mc := p.VAP.Policy.Spec.MatchConstraints; mc != nil {
		mp = mc.MatchPolicy
	}
	k, _ := json.Marshal(struct {
		F  *admissionregistrationv1.FailurePolicyType
		M  *admissionregistrationv1.MatchPolicyType
		NS any
		O  any
	}{p.VAP.Policy.Spec.FailurePolicy, mp, w.NamespaceSelector, w.ObjectSelector})
	return string(k)
}
