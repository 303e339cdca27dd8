package native

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/registration"
)

// Name is the name of the ValidatingAdmissionPolicy and binding compiled
// from the policy named policy.
func Name(policy string) string { return policy + ".tollgate.dev" }

// The variables a compiled policy adds to the policy's own. A policy
// whose own variable starts with varPrefix stays on the webhook.
const (
	varPrefix   = "tollgate_"
	varTemplate = varPrefix + "template" // the request is a Pod controller's, read as its Pod
	varPod      = varPrefix + "pod"      // object, or the Pod of its template
	varOldPod   = varPrefix + "oldPod"   // oldObject, likewise
	varRules    = varPrefix + "rules"    // each expression's result, in order
	varLabels   = varPrefix + "labels"   // what the label rules find missing
	varMessage  = varPrefix + "message"  // the message tollgate's webhook gives
)

// addValidate compiles a validate policy: one ValidatingAdmissionPolicy
// whose validations are the policy's expressions, then its label rules,
// each denying with the message and reason tollgate's webhook gives for
// the whole policy (the apiserver reports the first validation that
// fails, whose reason tollgate's webhook also reports).
//
// The expressions' results are one variable, a list: an error in any is
// an error in all, so that failurePolicy decides the whole policy, as in
// tollgate. With podControllers, expressions read a Pod controller's
// template as the Pod it makes (template.go).
func (out *Output) addValidate(p *policy.Policy, o *Options) error {
	c, err := newCompiler(p)
	if err != nil {
		return err
	}
	v, m := p.Spec.Validate, &p.Spec.Match
	name := Name(p.Name())
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: own(metav1.ObjectMeta{Name: name}, p.Name()),
	}
	s := &vap.Spec
	failure := admissionregistrationv1.FailurePolicyType(p.Spec.FailurePolicy)
	equivalent := admissionregistrationv1.Equivalent
	s.FailurePolicy = &failure
	s.MatchConstraints = &admissionregistrationv1.MatchResources{
		NamespaceSelector: registration.NamespaceSelector(m, o.ExcludedNamespaces),
		ObjectSelector:    registration.ObjectSelector(m),
		MatchPolicy:       &equivalent,
	}
	for _, r := range registration.Rules(m) {
		s.MatchConstraints.ResourceRules = append(s.MatchConstraints.ResourceRules, admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: r})
	}
	for _, cond := range m.Conditions {
		s.MatchConditions = append(s.MatchConditions, admissionregistrationv1.MatchCondition{Name: cond.Name, Expression: c.inline(cond.Expression)})
	}
	s.Variables = c.templateVariables()
	for _, vr := range v.Variables {
		s.Variables = append(s.Variables, admissionregistrationv1.Variable{Name: vr.Name, Expression: c.scoped(vr.Expression)})
	}
	if len(v.Expressions) > 0 {
		results := make([]string, len(v.Expressions))
		for i, e := range v.Expressions {
			results[i] = "dyn(" + c.scoped(e.Expression) + ")"
		}
		s.Variables = append(s.Variables, admissionregistrationv1.Variable{Name: varRules, Expression: "[" + strings.Join(results, ", ") + "]"})
	}
	if len(v.Labels) > 0 {
		s.Variables = append(s.Variables, admissionregistrationv1.Variable{Name: varLabels, Expression: c.labelProblems(v)})
	}
	s.Variables = append(s.Variables, admissionregistrationv1.Variable{Name: varMessage, Expression: c.message(p)})
	for i, e := range v.Expressions {
		s.Validations = append(s.Validations, admissionregistrationv1.Validation{
			Expression:        fmt.Sprintf("variables.%s[%d] == true", varRules, i),
			Message:           p.Name() + ": " + fallback(e),
			MessageExpression: "variables." + varMessage,
			Reason:            reason(e.Reason),
		})
	}
	if len(v.Labels) > 0 {
		forbidden := metav1.StatusReasonForbidden // a label rule's reason, as in tollgate
		s.Validations = append(s.Validations, admissionregistrationv1.Validation{
			Expression:        "size(variables." + varLabels + ") == 0",
			Message:           p.Name() + ": " + labelFallback(v),
			MessageExpression: "variables." + varMessage,
			Reason:            &forbidden,
		})
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: own(metav1.ObjectMeta{Name: name}, p.Name()),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{action(v.Action)},
		},
	}
	if err := check(vap, b); err != nil {
		return err
	}
	out.Validating = append(out.Validating, vap)
	out.ValidatingBinding = append(out.ValidatingBinding, b)
	return nil
}

// action is the binding's validation action for a policy's action.
func action(a policy.ValidateAction) admissionregistrationv1.ValidationAction {
	switch a {
	case policy.Warn:
		return admissionregistrationv1.Warn
	case policy.Audit:
		return admissionregistrationv1.Audit
	}
	return admissionregistrationv1.Deny
}

// reason is an expression's reason; nil is the apiserver's default,
// Invalid, which tollgate also gives.
func reason(r string) *metav1.StatusReason {
	if r == "" {
		return nil
	}
	sr := metav1.StatusReason(r)
	return &sr
}
