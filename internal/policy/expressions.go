package policy

import "github.com/tollgate-dev/tollgate/internal/cel"

// Expressions are every CEL expression a validating policy evaluates
// against a request: a tollgate policy's match conditions, variables,
// expressions and message expressions; a ValidatingAdmissionPolicy's (and
// those Kyverno's autogen derives from it). Label rules read only labels.
func (p *Policy) Expressions() []string {
	if p.VAP != nil {
		out := cel.Expressions(p.VAP.Policy)
		for _, a := range p.VAP.Autogen {
			out = append(out, cel.Expressions(a.Policy)...)
		}
		return out
	}
	var out []string
	for _, c := range p.Spec.Match.Conditions {
		out = append(out, c.Expression)
	}
	if v := p.Spec.Validate; v != nil {
		for _, x := range v.Variables {
			out = append(out, x.Expression)
		}
		for _, x := range v.Expressions {
			out = append(out, x.Expression, x.MessageExpression)
		}
	}
	return out
}
