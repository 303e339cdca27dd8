package cel

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
)

// CompileKyverno compiles a ValidatingAdmissionPolicy made of a Kyverno
// ValidatingPolicy with the apiserver's compiler in the apiserver's
// environment extended with what Kyverno's environment has beyond it
// (github.com/kyverno/kyverno at 111e07bb, pkg/cel/compiler/env.go,
// DefaultEnvOptionsWithCompat): cel-go's bindings (cel.bind), encoders
// (base64), math, protos and regex extensions, numeric comparisons across
// types, and orValue on a value that is not optional giving the value, as
// cel-go before v0.28 did. Kyverno's own libraries (resource, http, image,
// globalContext, ...) are not there.
//
// Its matchConditions are compiled apart, as the validations of Conditions,
// because Kyverno evaluates them with namespaceObject, which the
// apiserver's matcher leaves null (see Conditions).
//
// exceptionsParam says the policy's expressions read Kyverno's exceptions
// variable, renamed params (RenameIdent): the evaluator passes the
// exceptions' values as the policy's param, declared for every expression.
func CompileKyverno(vap *admissionregistrationv1.ValidatingAdmissionPolicy, exceptionsParam bool) (*VAP, field.ErrorList) {
	envs, err := kyvernoEnv()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), fmt.Errorf("the CEL environment of Kyverno policies: %w", err))}
	}
	bare := vap.DeepCopy()
	bare.Spec.MatchConditions = nil
	compiled, errs := compileVAP(bare, envs, exceptionsParam)
	conditions, cerrs := kyvernoConditions(vap.Name, vap.Spec.MatchConditions, *vap.Spec.FailurePolicy, envs, exceptionsParam)
	errs = append(cerrs, errs...)
	if len(errs) > 0 {
		return nil, errs
	}
	compiled.Conditions = conditions
	return compiled, nil
}

// CompileKyvernoConditions compiles the matchConditions of a Kyverno
// PolicyException in Kyverno's environment (see Conditions).
func CompileKyvernoConditions(name string, conditions []admissionregistrationv1.MatchCondition, fp admissionregistrationv1.FailurePolicyType) (*VAP, field.ErrorList) {
	envs, err := kyvernoEnv()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), fmt.Errorf("the CEL environment of Kyverno policies: %w", err))}
	}
	return kyvernoConditions(name, conditions, fp, envs, false)
}

// kyvernoConditions compiles match conditions as the validations of a
// ValidatingAdmissionPolicy named name, whose Validate gives one decision
// per condition, in order, with namespaceObject set; nil without conditions.
func kyvernoConditions(name string, conditions []admissionregistrationv1.MatchCondition, fp admissionregistrationv1.FailurePolicyType, envs *environment.EnvSet, params bool) (*VAP, field.ErrorList) {
	if len(conditions) == 0 {
		return nil, nil
	}
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	vap.Name = name
	vap.Spec.FailurePolicy = &fp
	for _, c := range conditions {
		vap.Spec.Validations = append(vap.Spec.Validations, admissionregistrationv1.Validation{Expression: c.Expression, Message: c.Name})
	}
	compiled, errs := compileVAP(vap, envs, params)
	for _, e := range errs { // spec.validations[i] is spec.matchConditions[i]
		e.Field = strings.Replace(e.Field, "spec.validations", "spec.matchConditions", 1)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	compiled.ConditionNames = make([]string, len(conditions))
	for i, c := range conditions {
		compiled.ConditionNames[i] = c.Name
	}
	return compiled, nil
}

func kyvernoEnv() (*environment.EnvSet, error) {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions: []cel.EnvOption{
			cel.CrossTypeNumericComparisons(true),
			ext.Bindings(),
			ext.Encoders(),
			ext.Math(),
			ext.Protos(),
			ext.Regex(ext.RegexVersion(1)),
			cel.Macros(cel.ReceiverMacro("orValue", 1, orValueCompatMacro)),
			cel.Function("__orValueCompat__",
				cel.Overload("__orValueCompat___dyn_dyn", []*cel.Type{cel.DynType, cel.DynType}, cel.DynType,
					cel.BinaryBinding(orValueCompat))),
		},
	})
}

// orValueCompatMacro rewrites x.orValue(y) to __orValueCompat__(x, y), as
// Kyverno's orValueCompatMacro does.
func orValueCompatMacro(eh cel.MacroExprFactory, target celast.Expr, args []celast.Expr) (celast.Expr, *cel.Error) {
	return eh.NewCall("__orValueCompat__", target, args[0]), nil
}

// orValueCompat is Kyverno's __orValueCompat__: an optional's value or y
// when it has none, y for an error, and any other value itself.
func orValueCompat(lhs, rhs ref.Val) ref.Val {
	switch v := lhs.(type) {
	case *types.Optional:
		if v.HasValue() {
			return v.GetValue()
		}
		return rhs
	case *types.Err:
		return rhs
	default:
		return lhs
	}
}
