package engine

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/gatekeeper"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// validateGatekeeper decides a request for the set's Gatekeeper
// Constraints with Gatekeeper's evaluator, at the webhook's enforcement
// point (audit's for a stored object), and answers in Gatekeeper's words.
// Each violation is a result of its Constraint: fail for deny, warn for
// warn, warn with "dryrun: " for dryrun, which never denies. A
// PolicyException naming the Constraint's policy lifts its violation. A
// Constraint without a violation leaves no result: Gatekeeper's evaluator
// does not say which Constraints matched. A referential Constraint that
// selects the request but has no inventory to read is an error result.
func (e *Engine) validateGatekeeper(ctx context.Context, g *policy.Group, req *admission.Request, stored bool) Evaluation {
	byName := make(map[string]*policy.Policy, len(g.Policies))
	for _, p := range g.Policies {
		byName[p.Name()] = p
	}
	point := gatekeeper.Webhook
	if stored {
		point = gatekeeper.Audit
	}
	vs, err := g.Policies[0].Gatekeeper.Evaluator.ReviewRequest(ctx, admissionRequest(req), e.namespaces.Lookup(req.Namespace), point)
	if err != nil {
		out := Evaluation{Response: admission.Errored(err)}
		for _, p := range g.Policies {
			out.Results = append(out.Results, Result{Policy: p.Name(), Outcome: Error, Message: err.Error(), Origin: p.Origin()})
		}
		return out
	}
	var kept []gatekeeper.Violation
	var results []Result
	var acted, warned []string
	for _, v := range vs {
		p, ok := byName[policy.GatekeeperName(v.Kind, v.Constraint)]
		if !ok {
			continue // a Constraint of another group
		}
		if ex := e.exemption(p.Name(), req, objectLabels(req)).Whole; ex != nil {
			r := exempted(p.Name(), ex)
			r.Origin = p.Origin()
			results = append(results, r)
			continue
		}
		if v.Err != nil {
			// Gatekeeper's webhook is failurePolicy Ignore: allowed, and said.
			results = append(results, Result{Policy: p.Name(), Outcome: Error, Message: ignoredError(v.Err.Error()), Origin: p.Origin()})
			continue
		}
		kept = append(kept, v)
		for _, a := range v.Actions {
			r := Result{Policy: p.Name(), Outcome: Warn, Message: v.Message, Origin: p.Origin()}
			switch a {
			case "deny":
				r.Outcome = Fail
				acted = append(acted, p.Name())
			case "warn":
				warned = append(warned, p.Name())
			default: // dryrun, or an action Gatekeeper does not take
				r.Message = a + ": " + v.Message
			}
			results = append(results, r)
		}
	}
	answer := gatekeeper.Words(kept)
	resp := admission.Allowed()
	if answer.Denial != "" {
		resp = admission.Denied(answer.Denial)
	}
	resp.Warnings, resp.Policies, resp.Warned = answer.Warnings, acted, warned
	return Evaluation{Response: resp, Results: results}
}

// admissionRequest is req as Gatekeeper's target reads it.
func admissionRequest(req *admission.Request) *admissionv1.AdmissionRequest {
	dryRun := req.DryRun
	return &admissionv1.AdmissionRequest{
		UID:         types.UID(req.UID),
		Kind:        metav1.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind},
		Resource:    metav1.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource},
		SubResource: req.SubResource,
		Name:        req.Name,
		Namespace:   req.Namespace,
		Operation:   admissionv1.Operation(req.Operation),
		UserInfo:    authenticationv1.UserInfo{Username: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups},
		Object:      runtime.RawExtension{Raw: req.Object()},
		OldObject:   runtime.RawExtension{Raw: req.OldObject()},
		DryRun:      &dryRun,
	}
}
