package engine

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/inject"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

var podsResource = corev1.SchemeGroupVersion.WithResource("pods").GroupResource()

// mutate runs a group's injection policies. Containers can only be added when
// a Pod is created, so any other operation leaves the Pod as it is.
func (e *Engine) mutate(g *policy.Group, req *admission.Request) admission.Response {
	if req.Operation != admission.Create || req.Resource.GroupResource() != podsResource {
		return admission.Allowed()
	}
	if _, err := decodeMeta(req.Object); err != nil {
		return admission.BadRequest(err)
	}
	var pod corev1.Pod
	if err := unmarshal(req.Object, &pod); err != nil {
		return admission.BadRequest(err)
	}
	// Pods made by controllers may arrive without a namespace: the request has it.
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	policies := matching(g, req, pod.Labels, nil)
	res := inject.Inject(inject.Params{Pod: &pod, Policies: policies})
	resp := admission.Patched(res.Patch)
	resp.Warnings = res.Warnings
	resp.Policies = res.Applied
	return resp
}
