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

	"github.com/tollgate-dev/tollgate/internal/exception"
	"github.com/tollgate-dev/tollgate/internal/kyverno"
)

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
			ke := &kyverno.Exception{Exception: e}
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
