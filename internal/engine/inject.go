package engine

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/inject"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

var podsResource = corev1.SchemeGroupVersion.WithResource("pods").GroupResource()

// inject runs a group's injection policies. Containers can only be added when
// a Pod is created, so any other operation leaves the Pod as it is.
func (e *Engine) inject(g *policy.Group, req *admission.Request) Evaluation {
	if req.Operation != admission.Create || req.Resource.GroupResource() != podsResource {
		return notApplicableAll(g, "injection applies to pods when they are created")
	}
	meta, _, err := metaOf(req)
	if err != nil {
		return errorAll(g, admission.BadRequest(err))
	}
	parts := req.ObjectParts() // found when the review was read: not scanned again
	pod, err := inject.PodFromParts(parts.Doc, parts.Metadata, parts.Spec)
	if err != nil {
		return errorAll(g, admission.BadRequest(err))
	}
	// Pods made by controllers may arrive without a namespace or name; the
	// request's namespace is the one that counts (matching uses it).
	policies, results, _ := e.matching(g, req, meta.Labels, nil)
	params := inject.Params{Pod: pod, Policies: policies, Namespace: req.Namespace}
	if pod.OptsOut() { // only then do namespace labels matter
		ns := e.namespace(req.Namespace)
		if ns == nil {
			ns = namespaces.Of(req.Namespace, nil)
		}
		params.NamespaceLabels = ns.Labels
	}
	res := inject.Inject(params)
	for _, o := range res.Effects {
		r := Result{Policy: o.Policy, Outcome: Pass, Message: o.Message}
		switch {
		case o.State == inject.OptedOut:
			r = notApplicable(o.Policy, o.Message)
		case o.Warning != "":
			r.Outcome, r.Message = Warn, o.Warning
		}
		results = append(results, r)
	}
	resp := admission.Patched(res.Patch)
	resp.Warnings = res.Warnings()
	resp.Policies = res.Applied()
	return Evaluation{Response: resp, Results: results}
}
