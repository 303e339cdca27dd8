package cel

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
)

// VAP is a compiled ValidatingAdmissionPolicy.
type VAP struct {
	validator validating.Validator
	matcher   matchconditions.Matcher // the policy's matchConditions; nil without
	// UsesNamespaceObject tells whether an expression reads namespaceObject,
	// which needs the request's Namespace.
	UsesNamespaceObject bool
	// fast is the policy planned for the fast path, nil when it cannot be,
	// and notFast says why (validatingpolicyfast.go).
	fast    *Program
	notFast string
}

// CompileVAP compiles a ValidatingAdmissionPolicy as the apiserver does
// (stored-expression environment, authorizer declared for validations and
// conditions, not for message expressions), reporting every expression that
// does not compile with its field path.
func CompileVAP(vap *admissionregistrationv1.ValidatingAdmissionPolicy) (*VAP, field.ErrorList) {
	return CompileVAPIn(vap, environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), false)
}

// CompileVAPIn compiles vap as CompileVAP does, in envs; params declares
// params without a paramKind (Kyverno's exceptions, see package kyverno).
// It is planned for the fast path in envs too.
func CompileVAPIn(vap *admissionregistrationv1.ValidatingAdmissionPolicy, envs *environment.EnvSet, params bool) (*VAP, field.ErrorList) {
	compiler, err := plugincel.NewCompositedCompiler(envs)
	spec := field.NewPath("spec")
	if err != nil {
		return nil, field.ErrorList{field.InternalError(spec, err)}
	}
	hasParams := vap.Spec.ParamKind != nil || params
	decls := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	messageDecls := plugincel.OptionalVariableDeclarations{HasParams: hasParams}
	var errs field.ErrorList
	for i, v := range vap.Spec.Variables {
		res := compiler.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, decls, environment.StoredExpressions)
		if res.Error != nil {
			errs = append(errs, field.Invalid(spec.Child("variables").Index(i).Child("expression"), v.Expression, res.Error.Detail))
		}
	}
	compile := func(list []plugincel.ExpressionAccessor, path func(int) *field.Path, d plugincel.OptionalVariableDeclarations) plugincel.ConditionEvaluator {
		for i, a := range list {
			if a == nil {
				continue
			}
			for _, e := range compiler.CompileCondition([]plugincel.ExpressionAccessor{a}, d, environment.StoredExpressions).CompilationErrors() {
				errs = append(errs, field.Invalid(path(i), a.GetExpression(), e.Error()))
			}
		}
		return compiler.CompileCondition(list, d, environment.StoredExpressions)
	}
	var matcher matchconditions.Matcher
	if n := len(vap.Spec.MatchConditions); n > 0 {
		acc := make([]plugincel.ExpressionAccessor, n)
		for i := range vap.Spec.MatchConditions {
			acc[i] = (*matchconditions.MatchCondition)(&vap.Spec.MatchConditions[i])
		}
		matcher = matchconditions.NewMatcher(compile(acc, func(i int) *field.Path {
			return spec.Child("matchConditions").Index(i).Child("expression")
		}, decls), vap.Spec.FailurePolicy, "policy", "validate", vap.Name)
	}
	rules := make([]plugincel.ExpressionAccessor, len(vap.Spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(vap.Spec.Validations))
	for i, v := range vap.Spec.Validations {
		rules[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	audits := make([]plugincel.ExpressionAccessor, len(vap.Spec.AuditAnnotations))
	for i, a := range vap.Spec.AuditAnnotations {
		audits[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	validator := validating.NewValidator(
		compile(rules, func(i int) *field.Path { return spec.Child("validations").Index(i).Child("expression") }, decls),
		matcher,
		compile(audits, func(i int) *field.Path { return spec.Child("auditAnnotations").Index(i).Child("valueExpression") }, decls),
		compile(messages, func(i int) *field.Path { return spec.Child("validations").Index(i).Child("messageExpression") }, messageDecls),
		vap.Spec.FailurePolicy, nil)
	if len(errs) > 0 {
		return nil, errs
	}
	v := &VAP{validator: validator, matcher: matcher, UsesNamespaceObject: analysis.Uses("namespaceObject", Expressions(vap)...)}
	v.fast, v.notFast = fastVAP(vap, envs, params)
	return v, nil
}

// Expressions are every CEL expression of a ValidatingAdmissionPolicy.
func Expressions(vap *admissionregistrationv1.ValidatingAdmissionPolicy) []string {
	var out []string
	for _, v := range vap.Spec.Variables {
		out = append(out, v.Expression)
	}
	for _, c := range vap.Spec.MatchConditions {
		out = append(out, c.Expression)
	}
	for _, v := range vap.Spec.Validations {
		out = append(out, v.Expression, v.MessageExpression)
	}
	for _, a := range vap.Spec.AuditAnnotations {
		out = append(out, a.ValueExpression)
	}
	return out
}

// Validate evaluates the policy for one binding's match and one of its
// params (nil without), with authz bound to the authorizer variable.
func (v *VAP) Validate(ctx context.Context, matched schema.GroupVersionResource, va *k8sadmission.VersionedAttributes, param runtime.Object, ns *corev1.Namespace, authz authorizer.UnconditionalAuthorizer) validating.ValidateResult {
	return v.validator.Validate(ctx, matched, va, param, ns, celconfig.RuntimeCELCostBudget, authz)
}

// Unmet tells whether res, Validate's result for one invocation, is the
// apiserver's answer to a false match condition, and names the condition.
// The validator then returns no decision and no audit annotation at all (it
// returns early); every other path returns one decision per validation and
// one result per audit annotation, both non-nil, or a single error
// decision, so an empty result means the policy did not apply. The
// conditions are evaluated again, only then, for the name.
func (v *VAP) Unmet(ctx context.Context, res validating.ValidateResult, va *k8sadmission.VersionedAttributes, param runtime.Object, authz authorizer.UnconditionalAuthorizer) (name string, unmet bool) {
	if res.Decisions != nil || res.AuditAnnotations != nil || v.matcher == nil {
		return "", false
	}
	return v.matcher.Match(ctx, va, param, authz).FailedConditionName, true
}
