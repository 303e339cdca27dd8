package policy

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// failurePolicyOf is a Kubernetes admission policy's failurePolicy
// (defaulted when loaded) as tollgate's.
func failurePolicyOf(f admissionregistrationv1.FailurePolicyType) FailurePolicy {
	if f == admissionregistrationv1.Ignore {
		return Ignore
	}
	return Fail
}

// bindingKind is one kind of Kubernetes admission policy binding: how to
// tell its policies and bindings among loaded documents, how to attach
// a binding to its policy, and how to split a policy's bindings into
// webhook entries.
type bindingKind struct {
	policy, binding string // kind names, for messages
	isPolicy        func(*Policy) bool
	// policyName is the binding's spec.policyName; false when p is not a
	// binding of this kind.
	policyName func(p *Policy) (string, bool)
	attach     func(target, binding *Policy)
	webhooks   func(p *Policy) []*BindingWebhook
}

var (
	vapBindings = bindingKind{
		policy: "ValidatingAdmissionPolicy", binding: "ValidatingAdmissionPolicyBinding",
		isPolicy: func(p *Policy) bool { return p.VAP != nil },
		policyName: func(p *Policy) (string, bool) {
			if p.binding == nil {
				return "", false
			}
			return p.binding.Spec.PolicyName, true
		},
		attach: func(target, b *Policy) { target.VAP.Bindings = append(target.VAP.Bindings, b.binding) },
		webhooks: func(p *Policy) []*BindingWebhook {
			return bindingWebhooks(p, GroupVAP, p.VAP.Policy.Spec.MatchConstraints, p.VAP.Bindings, vapMatch, func(served *Policy, bs []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
				selectedVAP(p.VAP, served, bs)
			})
		},
	}
	mapBindings = bindingKind{
		policy: "MutatingAdmissionPolicy", binding: "MutatingAdmissionPolicyBinding",
		isPolicy: func(p *Policy) bool { return p.MAP != nil },
		policyName: func(p *Policy) (string, bool) {
			if p.mapBinding == nil {
				return "", false
			}
			return p.mapBinding.Spec.PolicyName, true
		},
		attach: func(target, b *Policy) { target.MAP.Bindings = append(target.MAP.Bindings, b.mapBinding) },
		webhooks: func(p *Policy) []*BindingWebhook {
			return bindingWebhooks(p, GroupMAP, p.MAP.Policy.Spec.MatchConstraints, p.MAP.Bindings, mapMatch, func(served *Policy, bs []*admissionregistrationv1.MutatingAdmissionPolicyBinding) {
				selectedMAP(p.MAP, served, bs)
			})
		},
	}
)

// attachBindings gives each policy of k's kind its bindings and returns the
// other documents. Binding names are unique, as in a cluster; a binding
// naming a policy that is not loaded is an error, since it would silently
// do nothing.
func attachBindings(policies []*Policy, k bindingKind) ([]*Policy, []error) {
	byName := map[string]*Policy{}
	for _, p := range policies {
		if k.isPolicy(p) {
			byName[p.Name()] = p
		}
	}
	var out []*Policy
	var errs []error
	seen := map[string]*Policy{}
	for _, p := range policies {
		name, ok := k.policyName(p)
		if !ok {
			out = append(out, p)
			continue
		}
		if prev, ok := seen[p.Name()]; ok {
			errs = append(errs, fmt.Errorf("%s: metadata.name: duplicate %s name %q, first defined in %s", p.Source, k.binding, p.Name(), prev.Source))
			continue
		}
		seen[p.Name()] = p
		target, ok := byName[name]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s %q: spec.policyName: %s %q is not loaded", p.Source, k.binding, p.Name(), k.policy, name))
			continue
		}
		k.attach(target, p)
	}
	return out, errs
}

func vapMatch(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) *admissionregistrationv1.MatchResources {
	return b.Spec.MatchResources
}

func mapMatch(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) *admissionregistrationv1.MatchResources {
	return b.Spec.MatchResources
}
