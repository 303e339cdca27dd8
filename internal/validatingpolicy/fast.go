package validatingpolicy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"

	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
)

// decideFast is the fast path's result for the policy (cel.VAP.Decide):
// for one without params, matched as the request's own kind and resource
// (no equivalent version). A Kyverno policy's param is its exceptions
// variable: its fast plan exists only when no expression reads it. fast is
// false when it cannot decide; the apiserver's validator then does.
func decideFast(ctx context.Context, n *Policy, rv *admissionpolicy.Review, param, exceptions runtime.Object,
	kind schema.GroupVersionKind, resource schema.GroupVersionResource, ns *corev1.Namespace) (res validating.ValidateResult, fast bool) {
	req := rv.Request
	if (param != nil && param != exceptions) || kind != req.Kind || resource != req.Resource {
		return res, false
	}
	in := rv.Input(ns)
	if in == nil {
		return res, false
	}
	return n.Validator.Decide(ctx, in)
}
