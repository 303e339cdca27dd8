package policy

// Kyverno's PolicyExceptions (policies.kyverno.io) joined to the Kyverno
// policies they name, as Kyverno's compiler joins them
// (pkg/cel/policies/vpol/engine/provider.go
// and compiler/compiler.go): an exception applies to a policy whose kind
// and name one of its policyRefs gives, and its matchConditions compile in
// the policy's environment.

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
	"github.com/tollgate-dev/tollgate/internal/exception"
	"github.com/tollgate-dev/tollgate/internal/kyverno"
)

// KyvernoExceptionsVariable is Kyverno's CEL variable of the values of the
// PolicyExceptions that apply (exceptions.allowedValues,
// exceptions.allowedImages). tollgate compiles it as params, which Kyverno
// policies do not have.
const KyvernoExceptionsVariable = "exceptions"

// KyvernoException is a policies.kyverno.io PolicyException that names a
// Kyverno policy, with its matchConditions compiled.
type KyvernoException struct {
	*exception.Exception
	// Conditions decides the exception's matchConditions, one validation
	// each; nil when it has none.
	Conditions *kyverno.Conditions
}

// SetExceptions sets the set's PolicyExceptions and joins the Kyverno ones
// to the Kyverno policies they name; an exception whose matchConditions do
// not compile is an error, as it makes Kyverno's compilation of the policy
// fail.
func (s *Set) SetExceptions(list []*exception.Exception) error {
	s.Exceptions = list
	var errs []error
	for _, p := range s.Policies {
		if p.VAP == nil || p.VAP.Kyverno == nil {
			continue
		}
		k := p.VAP.Kyverno
		k.Exceptions = nil
		for _, e := range list {
			if e.Kyverno == nil || !e.Kyverno.Names(k.Kind, p.Name()) {
				continue
			}
			ke := &KyvernoException{Exception: e}
			if len(e.Kyverno.MatchConditions) > 0 {
				compiled, cerrs := kyverno.CompileConditions(e.Name(), e.Kyverno.MatchConditions, *p.VAP.Policy.Spec.FailurePolicy)
				for _, fe := range cerrs {
					errs = append(errs, fmt.Errorf("%s: %s %q: %w", e.Source, exception.Kind, e.Kyverno.Key(e.Name()), fe))
				}
				if len(cerrs) > 0 {
					continue
				}
				ke.Conditions = compiled
			}
			k.Exceptions = append(k.Exceptions, ke)
		}
	}
	return errors.Join(errs...)
}

// kyvernoExpressions are every CEL expression of a Kyverno policy.
func kyvernoExpressions(s *kyvernoSpec) []string {
	var out []string
	eachKyvernoExpression(s, func(_ *field.Path, e string) { out = append(out, e) })
	return out
}

// renameExceptions is s with Kyverno's exceptions variable renamed params
// in every expression.
func renameExceptions(s kyvernoSpec) kyvernoSpec {
	rename := func(e string) string { return analysis.RenameIdent(e, KyvernoExceptionsVariable, "params") }
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

// kyvernoParams refuses a policy reading params, which Kyverno's
// environment does not declare (and which stands for exceptions here), or
// a field of exceptions that Kyverno's type of it (libs.Exception) does not
// have.
func kyvernoParams(s *kyvernoSpec) field.ErrorList {
	var errs field.ErrorList
	check := func(p *field.Path, expr string) {
		if expr != "" && analysis.Uses("params", expr) {
			errs = append(errs, field.Invalid(p, expr, "undeclared reference to 'params': Kyverno policies have no params"))
		}
		for _, f := range analysis.Fields(expr, KyvernoExceptionsVariable) {
			if f != "allowedValues" && f != "allowedImages" {
				errs = append(errs, field.Invalid(p, expr, fmt.Sprintf("undefined field '%s' of exceptions (Kyverno's are allowedValues and allowedImages)", f)))
			}
		}
	}
	eachKyvernoExpression(s, check)
	return errs
}

// kyvernoExceptionWarnings are the policyRefs of a Kyverno exception that
// name no loaded Kyverno policy of their kind: they lift nothing.
func kyvernoExceptionWarnings(e *exception.Exception, byName map[string]*Policy) []string {
	var out []string
	for i, r := range e.Kyverno.PolicyRefs {
		p, ok := byName[r.Name]
		if ok && p.VAP != nil && p.VAP.Kyverno != nil && p.VAP.Kyverno.Kind == r.Kind {
			continue
		}
		out = append(out, fmt.Sprintf("%s: spec.policyRefs[%d]: no %s %q is loaded: it exempts nothing from it", e, i, r.Kind, r.Name))
	}
	return out
}
