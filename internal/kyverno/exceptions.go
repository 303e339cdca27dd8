package kyverno

// The exceptions variable of Kyverno policies, and their PolicyExceptions
// compiled.

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
	"github.com/tollgate-dev/tollgate/internal/exception"
)

// ExceptionsVariable is Kyverno's CEL variable of the values of the
// PolicyExceptions that apply (exceptions.allowedValues,
// exceptions.allowedImages). tollgate compiles it as params, which Kyverno
// policies do not have.
const ExceptionsVariable = "exceptions"

// Exception is a policies.kyverno.io PolicyException that names a
// Kyverno policy, with its matchConditions compiled.
type Exception struct {
	*exception.Exception
	// Conditions decides the exception's matchConditions, one validation
	// each; nil when it has none.
	Conditions *Conditions
}

// expressions are every CEL expression of a Kyverno policy.
func expressions(s *spec) []string {
	var out []string
	eachExpression(s, func(_ *field.Path, e string) { out = append(out, e) })
	return out
}

// renameExceptions is s with Kyverno's exceptions variable renamed params
// in every expression.
func renameExceptions(s spec) spec {
	rename := func(e string) string { return analysis.RenameIdent(e, ExceptionsVariable, "params") }
	s.MatchConditions = slices.Clone(s.MatchConditions)
	for i := range s.MatchConditions {
		s.MatchConditions[i].Expression = rename(s.MatchConditions[i].Expression)
	}
	s.Variables = slices.Clone(s.Variables)
	for i := range s.Variables {
		s.Variables[i].Expression = rename(s.Variables[i].Expression)
	}
	s.Validations = slices.Clone(s.Validations)
	for i := range s.Validations {
		s.Validations[i].Expression = rename(s.Validations[i].Expression)
		s.Validations[i].MessageExpression = rename(s.Validations[i].MessageExpression)
	}
	s.AuditAnnotations = slices.Clone(s.AuditAnnotations)
	for i := range s.AuditAnnotations {
		s.AuditAnnotations[i].ValueExpression = rename(s.AuditAnnotations[i].ValueExpression)
	}
	return s
}

// checkParams refuses a policy reading params, which Kyverno's
// environment does not declare (and which stands for exceptions here), or
// a field of exceptions that Kyverno's type of it (libs.Exception) does not
// have.
func checkParams(s *spec) field.ErrorList {
	var errs field.ErrorList
	check := func(p *field.Path, expr string) {
		if expr != "" && analysis.Uses("params", expr) {
			errs = append(errs, field.Invalid(p, expr, "undeclared reference to 'params': Kyverno policies have no params"))
		}
		for _, f := range analysis.Fields(expr, ExceptionsVariable) {
			if f != "allowedValues" && f != "allowedImages" {
				errs = append(errs, field.Invalid(p, expr, fmt.Sprintf("undefined field '%s' of exceptions (Kyverno's are allowedValues and allowedImages)", f)))
			}
		}
	}
	eachExpression(s, check)
	return errs
}
