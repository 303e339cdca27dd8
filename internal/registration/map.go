package registration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// mapWebhook covers a MutatingAdmissionPolicy: its resource rules (with
// "*" as the operations a policy can match: CREATE, UPDATE and CONNECT),
// selectors, match policy, failure policy and reinvocation policy;
// exclusions and bindings are applied by the server.
func mapWebhook(g *policy.Group, o *Options) admissionregistrationv1.MutatingWebhook {
	def := g.Policies[0].MAP.Policy
	mc := def.Spec.MatchConstraints
	var rules []admissionregistrationv1.RuleWithOperations
	for _, r := range mc.ResourceRules {
		rule := *r.RuleWithOperations.DeepCopy()
		var ops []admissionregistrationv1.OperationType
		for _, op := range rule.Operations {
			if op == admissionregistrationv1.OperationAll {
				ops = append(ops, admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Connect)
				continue
			}
			ops = append(ops, op)
		}
		rule.Operations = ops
		rules = append(rules, rule)
	}
	sideEffects := admissionregistrationv1.SideEffectClassNone
	timeout := o.TimeoutSeconds
	failure := o.failurePolicy(*def.Spec.FailurePolicy)
	reinvoke := def.Spec.ReinvocationPolicy
	return admissionregistrationv1.MutatingWebhook{
		Name:                    g.WebhookName(),
		ClientConfig:            clientConfig(g.Path(), o),
		Rules:                   rules,
		FailurePolicy:           &failure,
		MatchPolicy:             mc.MatchPolicy,
		NamespaceSelector:       namespaceSelector(&policy.Match{NamespaceSelector: mc.NamespaceSelector}, o.ExcludedNamespaces),
		ObjectSelector:          mc.ObjectSelector.DeepCopy(),
		SideEffects:             &sideEffects,
		TimeoutSeconds:          &timeout,
		AdmissionReviewVersions: []string{"v1", "v1beta1"},
		ReinvocationPolicy:      &reinvoke,
	}
}
