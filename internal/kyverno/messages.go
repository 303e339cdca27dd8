package kyverno

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/tollgate-dev/tollgate/internal/cel"
)

// messageSentinel is the message of compileMessages' first
// validation, which the apiserver's evaluator falls back to when the
// messageExpression fails.
const messageSentinel = "tollgate: the messageExpression failed"

// compileMessages compiles each validation's messageExpression M apart, as
// a policy with the validation's variables and two validations: one always
// false whose messageExpression is 'x' + base64.encode(bytes(M)), so that
// the evaluator's message is M's text exactly (it trims the text of a
// messageExpression, and falls back to the message for an empty, multi-line
// or failing one: Kyverno takes the text as it is), and one that evaluates
// M, so that its error is the decision's. Nil where a validation has no
// messageExpression.
func compileMessages(vap *admissionregistrationv1.ValidatingAdmissionPolicy, envs *environment.EnvSet, params bool) ([]*cel.VAP, field.ErrorList) {
	var out []*cel.VAP
	for i, v := range vap.Spec.Validations {
		if v.MessageExpression == "" {
			continue
		}
		if out == nil {
			out = make([]*cel.VAP, len(vap.Spec.Validations))
		}
		m := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		m.Name = vap.Name
		m.Spec.FailurePolicy = vap.Spec.FailurePolicy
		m.Spec.Variables = vap.Spec.Variables
		m.Spec.Validations = []admissionregistrationv1.Validation{
			{Expression: "false", Message: messageSentinel, MessageExpression: "'x' + base64.encode(bytes(" + v.MessageExpression + "))"},
			{Expression: "(" + v.MessageExpression + ") == (" + v.MessageExpression + ")"},
		}
		compiled, errs := cel.CompileVAPIn(m, envs, params)
		if len(errs) > 0 {
			for _, e := range errs {
				e.Field = fmt.Sprintf("spec.validations[%d].messageExpression", i)
			}
			return nil, errs
		}
		out[i] = compiled
	}
	return out, nil
}

// Message is the message of a failing validation with a
// messageExpression, as Kyverno words it (pkg/cel/policies/vpol/compiler/
// policy.go): the expression's text as it is; "failed to evaluate message
// expression: <cause>" when it fails; Kyverno's default for an empty text.
// res is the Validate of Messages[i].
func Message(res validating.ValidateResult, i int) string {
	if len(res.Decisions) == 2 {
		if text, ok := strings.CutPrefix(res.Decisions[0].Message, "x"); ok {
			if raw, err := base64.StdEncoding.DecodeString(text); err == nil {
				if len(raw) == 0 {
					return DefaultMessage(i)
				}
				return string(raw)
			}
		}
		if d := res.Decisions[1]; d.Evaluation == validating.EvalError {
			cause := d.Message
			if _, after, ok := strings.Cut(cause, "' resulted in error: "); ok {
				cause = after
			}
			return "failed to evaluate message expression: " + VariableCause(cause)
		}
	}
	return DefaultMessage(i)
}

// compositedVariable is how the apiserver's evaluator wraps the error of a
// variable an expression reads (k8s.io/apiserver/pkg/admission/plugin/cel/
// composition.go); Kyverno's lazy variables pass the error on as it is.
var compositedVariable = regexp.MustCompile(`^composited variable "[^"]*" fails to evaluate: `)

// VariableCause is an evaluation error as Kyverno words it: without
// the apiserver's words for each variable it went through.
func VariableCause(cause string) string {
	for {
		loc := compositedVariable.FindStringIndex(cause)
		if loc == nil {
			return cause
		}
		cause = cause[loc[1]:]
	}
}

// DefaultMessage is Kyverno's message for failing validation i
// without a message.
func DefaultMessage(i int) string {
	return fmt.Sprintf("CEL expression validation failed at index %d", i)
}
