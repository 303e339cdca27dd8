package mutatingpolicy

import (
	"context"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Compiled is a MutatingAdmissionPolicy compiled: its match conditions and one
// patcher per mutation, in order, as the apiserver compiles them.
type Compiled struct {
	compiler *plugincel.CompositedCompiler
	matcher  matchconditions.Matcher
	patchers []patch.Patcher
}

// Compile compiles a MutatingAdmissionPolicy as the apiserver's
// mutating plugin does (stored-expression environment, authorizer declared,
// patch types for mutations), reporting every expression that does not
// compile with its field path.
func Compile(p *admissionregistrationv1.MutatingAdmissionPolicy) (*Compiled, field.ErrorList) {
	spec := field.NewPath("spec")
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return nil, field.ErrorList{field.InternalError(spec, err)}
	}
	decls := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	var errs field.ErrorList
	for i, v := range p.Spec.Variables {
		res := compiler.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, decls, environment.StoredExpressions)
		if res.Error != nil {
			errs = append(errs, field.Invalid(spec.Child("variables").Index(i).Child("expression"), v.Expression, res.Error.Detail))
		}
	}
	out := &Compiled{compiler: compiler}
	if n := len(p.Spec.MatchConditions); n > 0 {
		acc := make([]plugincel.ExpressionAccessor, n)
		for i := range p.Spec.MatchConditions {
			acc[i] = (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
			for _, e := range compiler.CompileCondition([]plugincel.ExpressionAccessor{acc[i]}, decls, environment.StoredExpressions).CompilationErrors() {
				errs = append(errs, field.Invalid(spec.Child("matchConditions").Index(i).Child("expression"), acc[i].GetExpression(), e.Error()))
			}
		}
		out.matcher = matchconditions.NewMatcher(compiler.CompileCondition(acc, decls, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	patchDecls := decls
	patchDecls.HasPatchTypes = true
	for i, m := range p.Spec.Mutations {
		path := spec.Child("mutations").Index(i)
		var acc plugincel.ExpressionAccessor
		var newPatcher func(plugincel.MutatingEvaluator) patch.Patcher
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			acc, newPatcher, path = &patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, patch.NewJSONPatcher, path.Child("jsonPatch", "expression")
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			acc, newPatcher, path = &patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, patch.NewApplyConfigurationPatcher, path.Child("applyConfiguration", "expression")
		default:
			errs = append(errs, field.Invalid(path.Child("patchType"), m.PatchType, "want JSONPatch with jsonPatch or ApplyConfiguration with applyConfiguration"))
			continue
		}
		ev := compiler.CompileMutatingEvaluator(acc, patchDecls, environment.StoredExpressions)
		for _, e := range ev.CompilationErrors() {
			errs = append(errs, field.Invalid(path, acc.GetExpression(), e.Error()))
		}
		out.patchers = append(out.patchers, newPatcher(ev))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// MatchConditions evaluates the policy's matchConditions; true without any.
// When one is false, unmet names it. An error is the apiserver's, to be
// handled by the failure policy.
func (m *Compiled) MatchConditions(ctx context.Context, va *k8sadmission.VersionedAttributes, param runtime.Object, authz authorizer.UnconditionalAuthorizer) (ok bool, unmet string, err error) {
	if m.matcher == nil {
		return true, "", nil
	}
	res := m.matcher.Match(m.compiler.CreateContext(ctx), va, param, authz)
	if res.Error != nil {
		return false, "", res.Error
	}
	return res.Matches, res.FailedConditionName, nil
}

// Mutate runs every mutation in order on va's object, updating it as the
// apiserver's dispatcher does: a mutation that fails is reported and the
// next one runs on the object as it was.
// param is the binding's param (nil without paramKind) and authz the
// request's authorizer, bound to the variables params and authorizer.
func (m *Compiled) Mutate(ctx context.Context, matched schema.GroupVersionResource, va *k8sadmission.VersionedAttributes, ns *corev1.Namespace, param runtime.Object, authz authorizer.UnconditionalAuthorizer) []error {
	ctx = m.compiler.CreateContext(ctx)
	var errs []error
	for _, pt := range m.patchers {
		if va.VersionedObject.Object() == nil {
			return errs
		}
		out, err := pt.Patch(ctx, patch.Request{
			MatchedResource:     matched,
			VersionedAttributes: va,
			ObjectInterfaces:    objectInterfaces,
			OptionalVariables:   plugincel.OptionalVariableBindings{VersionedParams: param, Authorizer: authz},
			Namespace:           ns,
			TypeConverter:       builtinTypes(),
		}, celconfig.RuntimeCELCostBudget)
		if err != nil {
			errs = append(errs, err) // worded as the apiserver words it

			continue
		}
		va.UpdateObject(out)
	}
	return errs
}

// builtinTypes knows the schema of every built-in kind, as client-go's
// apply configurations do; an ApplyConfiguration on another kind (a custom
// resource) fails with the converter's error, for the failure policy.
var builtinTypes = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
})
