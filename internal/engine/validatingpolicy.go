package engine

import (
	"context"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// validateVAP enforces a group's ValidatingAdmissionPolicy (one per
// group) as the apiserver would. A policy that does not apply (its
// Decision's NotApplied) is admitted as the apiserver admits it. It is
// reported as such, never as a pass. stored says the request is a stored
// object's audit.
func (e *Engine) validateVAP(ctx context.Context, g *policy.Group, req *admission.Request, stored bool) Evaluation {
	p := g.Policies[0]
	if k := p.VAP.Kyverno; k != nil && !k.Admission && !stored {
		return Evaluation{Response: admission.Allowed(), Results: []Result{notApplicable(p.Name(), "evaluation.admission.enabled is false")}}
	}
	out, err := validatingpolicy.Evaluate(ctx, p.VAP, req, e.namespaces, e.external, e.exceptions.Now())
	if err != nil {
		ev := errorAll(g, admission.BadRequest(err))
		ev.Results[0].Origin = p.Origin()
		return ev
	}
	resp := admission.Allowed()
	if out.NotApplied != "" {
		r := notApplicable(p.Name(), out.NotApplied)
		r.Origin = p.Origin()
		return Evaluation{Response: resp, Results: []Result{r}}
	}
	if len(out.KyvernoExceptions) > 0 {
		return Evaluation{Response: resp, Results: []Result{kyvernoExempted(p, out)}}
	}
	if out.Matched {
		if ex := e.exemption(p.Name(), req, objectLabels(req)).Whole; ex != nil { // a VAP's rules have no names
			r := exempted(p.Name(), ex)
			r.Origin = p.Origin()
			return Evaluation{Response: resp, Results: []Result{r}}
		}
	}
	r := Result{Policy: p.Name(), Outcome: Pass, Binding: strings.Join(out.Bindings, ","), Origin: p.Origin()}
	if p.VAP.Kyverno != nil {
		r.Binding = "" // a Kyverno policy's binding is inline, named as the policy
	}
	switch {
	case out.Denial != "":
		r.Outcome, r.Message = Fail, out.Denial
		resp = admission.Denied(out.Denial)
		resp.Code, resp.Reason = out.Code, out.Reason
	case len(out.Undecided) > 0:
		r.Outcome, r.Message = Error, "could not be evaluated (failurePolicy Ignore): "+out.Undecided[0]
	case len(out.Ignored) > 0:
		r.Outcome, r.Message = Error, "could not be evaluated (failurePolicy Ignore): "+out.Ignored[0]
	case len(out.Warnings) > 0:
		r.Outcome, r.Message = Warn, out.Warnings[0]
	case len(out.Failures) > 0:
		r.Outcome, r.Message = Warn, "audit: "+out.Failures[0]
	}
	resp.Warnings = out.Warnings
	resp.AuditAnnotations = out.AuditAnnotations
	resp.Policies = []string{p.Name()}
	return Evaluation{Response: resp, Results: []Result{r}}
}

// InBackground tells whether a group takes part in background evaluations:
// all do but a Kyverno policy with evaluation.background.enabled false.
func InBackground(g *policy.Group) bool {
	for _, p := range g.Policies {
		if p.VAP != nil && p.VAP.Kyverno != nil && !p.VAP.Kyverno.Background {
			return false
		}
	}
	return true
}

// kyvernoExempted is the result of a Kyverno policy that Kyverno
// PolicyExceptions lift whole, worded as Kyverno's engine words it
// (pkg/cel/policies/vpol/engine/engine.go): skip, or pass when the
// deciding exception's reportResult says so.
func kyvernoExempted(p *policy.Policy, out validatingpolicy.Decision) Result {
	keys := strings.Join(out.KyvernoExceptions, ", ")
	r := Result{Policy: p.Name(), Outcome: Skip, Message: "rule is skipped due to policy exception: " + keys, Exception: keys, Origin: p.Origin()}
	if out.KyvernoResult == "pass" {
		r.Outcome, r.Message = Pass, "rule is passed due to policy exception: "+keys
	}
	return r
}
