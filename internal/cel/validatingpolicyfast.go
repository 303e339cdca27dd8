package cel

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
)

// A ValidatingAdmissionPolicy on the fast path. Its validations and
// variables are planned as tollgate's own policies are (a Program). The
// fast path decides only where the values alone decide: each validation
// true, or false with its message. Anything else (an error, the cost
// budget, a plan that gives way) goes to the apiserver's validator,
// whose words and failurePolicy decide.

// fastVAP is the policy's Program, compiled in envs, when the fast path
// can decide it alone, with why not otherwise. params: the policy's
// expressions read params without a paramKind (Kyverno's exceptions).
func fastVAP(vap *admissionregistrationv1.ValidatingAdmissionPolicy, envs *environment.EnvSet, params bool) (*Program, string) {
	switch {
	case vap.Spec.ParamKind != nil || params:
		return nil, "params"
	case len(vap.Spec.MatchConditions) > 0:
		return nil, "matchConditions"
	case len(vap.Spec.AuditAnnotations) > 0:
		return nil, "auditAnnotations"
	case analysis.Uses("authorizer", Expressions(vap)...):
		return nil, "authorizer"
	}
	spec := Spec{Name: vap.Name}
	for _, v := range vap.Spec.Variables {
		spec.Variables = append(spec.Variables, NamedExpression{Name: v.Name, Expression: v.Expression})
	}
	for _, v := range vap.Spec.Validations {
		val := Validation{Expression: v.Expression, Message: v.Message, MessageExpression: v.MessageExpression}
		if v.Reason != nil {
			val.Reason = string(*v.Reason)
		}
		spec.Validations = append(spec.Validations, val)
	}
	p, _, errs := compile(spec, field.NewPath("spec"), envs)
	switch {
	case len(errs) > 0:
		return nil, "compile: " + errs.ToAggregate().Error()
	case p.fast == nil:
		return nil, "an expression the fast path cannot plan"
	}
	return p, ""
}

// FastPath says why the policy is never decided on the fast path; empty
// when it can be.
func (v *VAP) FastPath() string { return v.notFast }

// Decide is the policy's result on in from the fast path: every
// validation admitted, or the false ones denied with the words the
// apiserver's validator gives them. ok is false when the fast path cannot
// decide alone (an error, the cost budget, a plan that gives way); the
// validator then decides (Validate). in must be the request the policy
// matched, as the matched kind and resource.
func (v *VAP) Decide(ctx context.Context, in *Input) (res validating.ValidateResult, ok bool) {
	if v.fast == nil {
		return res, false
	}
	d := v.fast.decideFast(ctx, in)
	if d == nil {
		return res, false
	}
	return validating.ValidateResult{Decisions: d}, true
}

// Direct tells whether every validation of the policy has a plan for the
// fast path's direct evaluator, which decides without CEL values.
func (v *VAP) Direct() bool { return v.fast != nil && v.fast.fast.Direct() }
