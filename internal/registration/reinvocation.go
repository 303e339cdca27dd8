package registration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// reinvocation is the reinvocationPolicy of a tollgate policy group's
// mutating webhook (a MutatingAdmissionPolicy's is its own).
//
// Injection is Never: what it adds depends only on the items of its own
// name and on the Pod's status and opt-out annotations, and it never
// changes or removes anything, so a reinvocation after a later mutation
// (the apiserver's ServiceAccount plugin mounting its token into the new
// sidecar, on every injected Pod) finds the policy recorded and answers
// without a patch: a third review per Pod create for nothing
// (docs/performance.md measures it). What Never gives up is stated in
// docs/serving.md: a change made after tollgate's webhook, such as a label
// that would make another injection policy match, is not seen.
//
// Label, annotation and CEL mutations are IfNeeded: what they write may
// depend on anything in the object (every container, say), so they run
// again on what later mutations added.
func reinvocation(kind policy.GroupType) admissionregistrationv1.ReinvocationPolicyType {
	if kind == policy.GroupInjection {
		return admissionregistrationv1.NeverReinvocationPolicy
	}
	return admissionregistrationv1.IfNeededReinvocationPolicy
}
