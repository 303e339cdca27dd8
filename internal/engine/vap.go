package engine

import (
	"context"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/vap"
)

// validateVAP enforces a group's ValidatingAdmissionPolicy (one per
// group) as the apiserver would.
func (e *Engine) validateVAP(ctx context.Context, g *policy.Group, req *admission.Request) Evaluation {
	p := g.Policies[0]
	out, err := vap.Evaluate(ctx, p.VAP, req, e.namespaces, e.external)
	if err != nil {
		return errorAll(g, admission.BadRequest(err))
	}
	r := Result{Policy: p.Name(), Outcome: Pass}
	resp := admission.Allowed()
	if out.Matched {
		if ex := e.exemption(p.Name(), req, objectLabels(req)).Whole; ex != nil { // a VAP's rules have no names
			return Evaluation{Response: resp, Results: []Result{exempted(p.Name(), ex)}}
		}
	}
	switch {
	case out.Denial != "":
		r.Outcome, r.Message = Fail, out.Denial
		resp = admission.Denied(out.Denial)
		resp.Code, resp.Reason = out.Code, out.Reason
	case len(out.Undecided) > 0:
		r.Outcome, r.Message = Error, "could not be evaluated (failurePolicy Ignore): "+out.Undecided[0]
	case !out.Matched:
		r.Outcome, r.Message = Skip, "does not match the request"
	case len(out.Warnings) > 0:
		r.Outcome, r.Message = Warn, out.Warnings[0]
	case len(out.Failures) > 0:
		r.Outcome, r.Message = Warn, "audit: "+out.Failures[0]
	}
	resp.Warnings = out.Warnings
	resp.AuditAnnotations = out.AuditAnnotations
	if out.Matched || out.Denial != "" {
		resp.Policies = []string{p.Name()}
	}
	return Evaluation{Response: resp, Results: []Result{r}}
}
