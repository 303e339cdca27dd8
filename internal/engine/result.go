package engine

import (
	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Outcome is what one policy made of one request, in the words of policy reports.
type Outcome string

// The outcomes of a policy for a request.
const (
	Pass  Outcome = "pass"
	Fail  Outcome = "fail"
	Warn  Outcome = "warn"
	Skip  Outcome = "skip"
	Error Outcome = "error"
)

// Result is one policy's outcome for a request.
type Result struct {
	Policy  string
	Outcome Outcome
	Message string
	// Exception names the PolicyException that made the outcome Skip.
	Exception string
	// NotApplicable: the policy does not apply to the request (Outcome
	// Skip, Message says why; see applies.go). Every other result, a skip by
	// an exception included, is about a policy that applies.
	NotApplicable bool
	// Binding names the ValidatingAdmissionPolicyBindings that decided a
	// VAP's result (validatingpolicy.Decision.Bindings), comma-separated.
	// Origin is where a VAP came from (policy.Policy.Origin). Both are
	// empty for other policies.
	Binding, Origin string
}

// Applies tells whether the policy applied to the request: what every path
// (reports, tests, metrics) reads to leave out the policies that did not.
func (r Result) Applies() bool { return !r.NotApplicable }

// Evaluation is the answer to a request and how each policy came to it.
type Evaluation struct {
	Response admission.Response
	Results  []Result
}

// errorAll answers a request the group cannot read: every policy errs.
func errorAll(g *policy.Group, resp admission.Response) Evaluation {
	ev := Evaluation{Response: resp}
	for _, p := range g.Policies {
		ev.Results = append(ev.Results, Result{Policy: p.Name(), Outcome: Error, Message: resp.Message})
	}
	return ev
}
