package engine

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// validateVAP enforces a group's ValidatingAdmissionPolicies as the
// apiserver would: one, or those sharing a binding's webhook entry. Each is
// decided alone (validatingPolicy). The answer is as the apiserver would
// make it of one webhook per policy: denied when one denies, with the
// first denial's words (webhooks run at once, so the apiserver may show
// any of them); the warnings and audit annotations of all.
func (e *Engine) validateVAP(ctx context.Context, g *policy.Group, req *admission.Request, stored bool) Evaluation {
	rv := admissionpolicy.NewReview(req) // decoded once, for every policy
	rv.TrackedOnly = e.trackedOnly
	if len(g.Policies) == 1 {
		return e.validatingPolicy(ctx, g.Policies[0], rv, stored)
	}
	out := Evaluation{Response: admission.Allowed()}
	for _, p := range g.Policies {
		ev := e.validatingPolicy(ctx, p, rv, stored)
		out.Results = append(out.Results, ev.Results...)
		r := ev.Response
		if !r.Allowed && out.Response.Allowed {
			out.Response.Allowed, out.Response.Code, out.Response.Reason, out.Response.Message = false, r.Code, r.Reason, r.Message
		}
		out.Response.Warnings = append(out.Response.Warnings, r.Warnings...)
		out.Response.Policies = append(out.Response.Policies, r.Policies...)
		out.Response.AuditAnnotations = mergeAudit(out.Response.AuditAnnotations, r.AuditAnnotations)
	}
	return out
}

// validationFailure is the apiserver's audit annotation of failed
// validations: a JSON list, to which each policy adds its own.
const validationFailure = "validation.policy.admission.k8s.io/validation_failure"

// mergeAudit adds a policy's audit annotations to those of the policies
// before it. Keys are the policy's own (<policy>/<key>) but for
// validationFailure, whose lists are joined.
func mergeAudit(into, add map[string]string) map[string]string {
	if len(add) == 0 {
		return into
	}
	if into == nil {
		into = map[string]string{}
	}
	for k, v := range add {
		prev, ok := into[k]
		if k != validationFailure || !ok {
			into[k] = v
			continue
		}
		var a, b []json.RawMessage
		if json.Unmarshal([]byte(prev), &a) != nil || json.Unmarshal([]byte(v), &b) != nil {
			into[k] = v
			continue
		}
		joined, _ := json.Marshal(append(a, b...))
		into[k] = string(joined)
	}
	return into
}

// validatingPolicy enforces one ValidatingAdmissionPolicy. A policy
// that does not apply (its Decision's NotApplied) is admitted as the
// apiserver admits it. It is reported as such, never as a pass. stored
// says the request is a stored object's audit.
func (e *Engine) validatingPolicy(ctx context.Context, p *policy.Policy, rv *admissionpolicy.Review, stored bool) Evaluation {
	if k := p.VAP.Kyverno; k != nil && !k.Admission && !stored {
		return Evaluation{Response: admission.Allowed(), Results: []Result{notApplicable(p.Name(), "evaluation.admission.enabled is false")}}
	}
	out, err := validatingpolicy.Evaluate(ctx, p.VAP, rv, e.namespaces, e.external, e.exceptions.Now())
	if err != nil {
		resp := admission.BadRequest(err)
		return Evaluation{Response: resp, Results: []Result{{Policy: p.Name(), Outcome: Error, Message: resp.Message, Origin: p.Origin()}}}
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
		if ex := e.exemption(p.Name(), rv.Request, objectLabels(rv.Request)).Whole; ex != nil { // a VAP's rules have no names
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
		r.Outcome, r.Message = Error, ignoredError(out.Undecided[0])
	case len(out.Ignored) > 0:
		r.Outcome, r.Message = Error, ignoredError(out.Ignored[0])
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
