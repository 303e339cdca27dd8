package registration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// mapWebhook covers the bindings of a MutatingAdmissionPolicy that share
// their selectors, as bindingWebhook, with "*" in the rules as the
// operations a policy can match (CREATE, UPDATE and CONNECT) and the
// policy's reinvocation policy.
func mapWebhook(def *admissionregistrationv1.MutatingAdmissionPolicy, w *policy.BindingWebhook, o *Options) admissionregistrationv1.MutatingWebhook {
	v := bindingWebhook(def.Spec.MatchConstraints, *def.Spec.FailurePolicy, w, o)
	for i, rule := range v.Rules {
		var ops []admissionregistrationv1.OperationType
		for _, op := range rule.Operations {
			if op == admissionregistrationv1.OperationAll {
				ops = append(ops, admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Connect)
				continue
			}
			ops = append(ops, op)
		}
		v.Rules[i].Operations = ops
	}
	return asMutating(v, def.Spec.ReinvocationPolicy)
}
