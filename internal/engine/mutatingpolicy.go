package engine

import (
	"context"
	"fmt"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"github.com/tollgate-dev/tollgate/internal/mutatingpolicy"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// mutateMAP runs a group's MutatingAdmissionPolicy (one per group) as the
// apiserver would, and answers with the JSON Patch from the object as
// received to the object as the policy left it. The patch is applied here
// first, so a patch the apiserver could not apply is never sent. A policy
// that does not apply (its Mutation's NotApplied) is reported as
// such, never as a pass.
func (e *Engine) mutateMAP(ctx context.Context, g *policy.Group, req *admission.Request) Evaluation {
	p := g.Policies[0]
	out, err := mutatingpolicy.Mutate(ctx, p.MAP, req, e.namespaces, e.external)
	if err != nil {
		return errorAll(g, admission.BadRequest(err))
	}
	r := Result{Policy: p.Name(), Outcome: Pass, Message: "no change needed"}
	resp := admission.Allowed()
	switch {
	case out.Denial != "":
		r.Outcome, r.Message = Fail, out.Denial
		resp = admission.Denied(out.Denial)
		resp.Code, resp.Reason = out.Code, out.Reason
	case out.NotApplied != "":
		return Evaluation{Response: resp, Results: []Result{notApplicable(p.Name(), out.NotApplied)}}
	case out.Changed:
		ops, err := diffPatch(req.Object(), out.Object)
		if err == nil {
			_, err = jsonpatch.Apply(req.Object(), ops)
		}
		if err != nil {
			return errorAll(g, admission.Errored(fmt.Errorf("policy %s: %w", p.Name(), err)))
		}
		r.Message = fmt.Sprintf("%d patch operations", len(ops))
		resp = admission.Patched(ops)
	}
	if len(out.Errors) > 0 && out.Denial == "" {
		r.Outcome, r.Message = Warn, fmt.Sprintf("errors ignored (failurePolicy Ignore): %s", out.Errors[0])
	}
	if out.Denial != "" || out.Changed {
		resp.Policies = []string{p.Name()}
	}
	return Evaluation{Response: resp, Results: []Result{r}}
}
