package vap

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
)

// recordKyverno acts on a Kyverno policy's validation result as Kyverno
// does (github.com/kyverno/kyverno at 111e07bb,
// pkg/cel/policies/vpol/compiler/policy.go and
// pkg/webhooks/resource/vpol/handler.go): the validations run in order and
// the first that is false or errs decides alone; an error is the policy's
// error whatever its failurePolicy (which Kyverno applies to match
// conditions and to its webhook only); Deny refuses with "Policy <name>
// failed: <message>" ("error: error: <error>" for an error), Warn warns in
// the same words, Audit reports.
func (e *evaluation) recordKyverno(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, res validating.ValidateResult) {
	for i, d := range res.Decisions {
		if d.Action != validating.ActionDeny && d.Evaluation != validating.EvalError {
			continue
		}
		msg := fmt.Sprintf("Policy %s failed: %s", e.def.Name, d.Message)
		if d.Evaluation == validating.EvalError {
			msg = fmt.Sprintf("Policy %s error: error: %s", e.def.Name, kyvernoCause(e.def, i, d.Message))
		}
		e.out.Failures = append(e.out.Failures, d.Message)
		for _, action := range b.Spec.ValidationActions {
			switch action {
			case admissionregistrationv1.Deny:
				e.denied = append(e.denied, denial{binding: b, message: msg, kyverno: true})
			case admissionregistrationv1.Warn:
				e.out.Warnings = append(e.out.Warnings, msg)
			case admissionregistrationv1.Audit:
				e.failures = append(e.failures, failure{Message: d.Message, Policy: e.def.Name, Binding: b.Name, ExpressionIndex: i, ValidationActions: b.Spec.ValidationActions})
			}
		}
		break // the first failing validation only
	}
	for _, a := range res.AuditAnnotations {
		if a.Action == validating.AuditAnnotationActionPublish {
			e.audit[e.def.Name+"/"+a.Key] = a.Value
		}
	}
}

// kyvernoCause is the error of validation i as Kyverno words it, bare: the
// apiserver's evaluator says "expression '<expression>' resulted in error:
// <cause>" (k8s.io/apiserver/pkg/admission/plugin/cel/activation.go).
func kyvernoCause(def *admissionregistrationv1.ValidatingAdmissionPolicy, i int, message string) string {
	if i < len(def.Spec.Validations) {
		if cause, ok := strings.CutPrefix(message, "expression '"+def.Spec.Validations[i].Expression+"' resulted in error: "); ok {
			return cause
		}
	}
	return message
}
