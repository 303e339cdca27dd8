package kyverno

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/tollgate-dev/tollgate/internal/cel"
	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// Compiled is what Kyverno's evaluation of a policy adds to the
// apiserver's validator of it.
type Compiled struct {
	// Conditions decide the policy's matchConditions; nil without.
	Conditions *Conditions
	// Messages word each validation's messageExpression as Kyverno does
	// (see Message): nil where a validation has none, all nil without any.
	Messages []*cel.VAP
	// bound compiles the policy again for each store it reads Kyverno's
	// resource library from; nil when it calls none.
	bound *bound
}

// Conditions are match conditions compiled as the validations of a
// ValidatingAdmissionPolicy, one each, in order. Kyverno evaluates them
// with namespaceObject, which the apiserver's matcher leaves null.
type Conditions struct {
	*cel.VAP
	// Names are the conditions' names, in order.
	Names []string
}

// Compile compiles a ValidatingAdmissionPolicy made of a Kyverno
// ValidatingPolicy with the apiserver's compiler, in the apiserver's
// environment extended with what Kyverno's has beyond it
// (pkg/cel/compiler/env.go, DefaultEnvOptionsWithCompat): cel-go's
// bindings (cel.bind), encoders (base64), math, protos and regex
// extensions, numeric comparisons across types, and orValue on a value
// that is not optional giving the value, as cel-go before v0.28 did. Of
// Kyverno's own libraries, only resource.Get and resource.List are there,
// for a policy that calls them (res): the compiled policy reads no store
// until ForStore gives it one.
//
// The validator it returns decides the validations. The policy's
// matchConditions are compiled apart (Compiled.Conditions).
//
// exceptionsParam says the policy's expressions read Kyverno's exceptions
// variable, renamed params: the evaluator passes the exceptions' values as
// the policy's param, declared for every expression.
func Compile(vap *admissionregistrationv1.ValidatingAdmissionPolicy, exceptionsParam bool, res *Resources) (*cel.VAP, *Compiled, field.ErrorList) {
	validator, compiled, errs := compile(vap, exceptionsParam, res, nil)
	for _, e := range errs { // the compiler names the functions resource.Get and resource.List are rewritten to
		e.Detail = strings.NewReplacer(getFunction, "resource.Get", listFunction, "resource.List", "'(kubernetes.AdmissionRequest, ", "'(").Replace(e.Detail)
	}
	if len(errs) > 0 || res == nil || len(res.Resources) == 0 {
		return validator, compiled, errs
	}
	compiled.bound = &bound{compile: func(store *refs.Store) (*cel.VAP, *Compiled, error) {
		v, c, errs := compile(vap, exceptionsParam, res, store)
		if len(errs) > 0 {
			return nil, nil, fmt.Errorf("policy %s compiled with the store of referenced objects: %w", vap.Name, errs.ToAggregate())
		}
		return v, c, nil
	}}
	return validator, compiled, nil
}

// compile is Compile with Kyverno's resource library, when the policy
// calls it, reading store.
func compile(vap *admissionregistrationv1.ValidatingAdmissionPolicy, exceptionsParam bool, res *Resources, store *refs.Store) (*cel.VAP, *Compiled, field.ErrorList) {
	var lib *library
	if res != nil && len(res.Resources) > 0 {
		lib = &library{res: res, store: store}
	}
	envs, err := env(lib)
	if err != nil {
		return nil, nil, field.ErrorList{field.InternalError(field.NewPath("spec"), fmt.Errorf("the CEL environment of Kyverno policies: %w", err))}
	}
	bare := vap.DeepCopy()
	bare.Spec.MatchConditions = nil
	validator, errs := cel.CompileVAPIn(bare, envs, exceptionsParam)
	conditions, cerrs := compileConditions(vap.Name, vap.Spec.MatchConditions, *vap.Spec.FailurePolicy, envs, exceptionsParam)
	errs = append(cerrs, errs...)
	if len(errs) > 0 {
		return nil, nil, errs
	}
	messages, errs := compileMessages(vap, envs, exceptionsParam)
	if len(errs) > 0 {
		return nil, nil, errs
	}
	return validator, &Compiled{Conditions: conditions, Messages: messages}, nil
}

// CompileConditions compiles the matchConditions of a Kyverno
// PolicyException in Kyverno's environment; nil without conditions.
func CompileConditions(name string, conditions []admissionregistrationv1.MatchCondition, fp admissionregistrationv1.FailurePolicyType) (*Conditions, field.ErrorList) {
	envs, err := env(nil)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), fmt.Errorf("the CEL environment of Kyverno policies: %w", err))}
	}
	return compileConditions(name, conditions, fp, envs, false)
}

// compileConditions compiles match conditions as the validations of a
// ValidatingAdmissionPolicy named name; nil without conditions.
func compileConditions(name string, conditions []admissionregistrationv1.MatchCondition, fp admissionregistrationv1.FailurePolicyType, envs *environment.EnvSet, params bool) (*Conditions, field.ErrorList) {
	if len(conditions) == 0 {
		return nil, nil
	}
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	vap.Name = name
	vap.Spec.FailurePolicy = &fp
	for _, c := range conditions {
		vap.Spec.Validations = append(vap.Spec.Validations, admissionregistrationv1.Validation{Expression: c.Expression, Message: c.Name})
	}
	compiled, errs := cel.CompileVAPIn(vap, envs, params)
	for _, e := range errs { // spec.validations[i] is spec.matchConditions[i]
		e.Field = strings.Replace(e.Field, "spec.validations", "spec.matchConditions", 1)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	out := &Conditions{VAP: compiled, Names: make([]string, len(conditions))}
	for i, c := range conditions {
		out.Names[i] = c.Name
	}
	return out, nil
}
