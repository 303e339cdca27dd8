package engine

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/labelrule"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// answers gathers what the policies of one group said about a request:
// the denials, warnings and audit annotations its response carries.
type answers struct {
	denials, warnings []string
	code              int32
	audit             map[string]string
}

// ignoredError is the result message of a policy that could not be
// evaluated, admitted because its failurePolicy is Ignore.
func ignoredError(err string) string {
	return "could not be evaluated (failurePolicy Ignore): " + err
}

// undecided is the result of p when it could not be evaluated: its
// failurePolicy decides.
func (a *answers) undecided(p *policy.Policy, subject labelrule.Subject, err error) Result {
	if p.Spec.FailurePolicy == policy.Ignore {
		return Result{Policy: p.Name(), Outcome: Error, Message: ignoredError(err.Error())}
	}
	msg := fmt.Sprintf("%s: policy %s could not be evaluated: %v", subject, p.Name(), err)
	a.deny(msg, http.StatusForbidden)
	return Result{Policy: p.Name(), Outcome: Fail, Message: msg}
}

// violated is the result of p when it found problems, answered as its
// action says: a denial (with code), a warning, or an audit annotation.
func (a *answers) violated(p *policy.Policy, action policy.ValidateAction, subject labelrule.Subject, problems []string, code int32) Result {
	msg := labelrule.Explain(subject, p.Name(), problems)
	switch action {
	case policy.Warn:
		a.warnings = append(a.warnings, p.Name()+": "+strings.Join(problems, "; "))
		return Result{Policy: p.Name(), Outcome: Warn, Message: msg}
	case policy.Audit:
		if a.audit == nil {
			a.audit = map[string]string{}
		}
		a.audit[auditKey(p.Name())] = msg
		return Result{Policy: p.Name(), Outcome: Warn, Message: "audit: " + msg}
	}
	a.deny(msg, code)
	return Result{Policy: p.Name(), Outcome: Fail, Message: msg}
}

func (a *answers) deny(msg string, code int32) {
	a.denials = append(a.denials, msg)
	a.code = firstCode(a.code, code)
}

// evaluation is the group's response, with every policy's result.
func (a *answers) evaluation(results []Result) Evaluation {
	resp := admission.Allowed()
	if len(a.denials) > 0 {
		resp = admission.Denied(strings.Join(a.denials, "; "))
		resp.Code, resp.Reason = a.code, reasonName(a.code)
	}
	resp.Warnings = a.warnings
	if len(a.audit) > 0 {
		resp.AuditAnnotations = a.audit
	}
	resp.Policies = applied(results)
	return Evaluation{Response: resp, Results: results}
}
