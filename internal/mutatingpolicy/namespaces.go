package mutatingpolicy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// errNamespaceLabels is why a binding cannot be evaluated without cluster
// access; the policy's failurePolicy decides, tollgate never guesses.
const errNamespaceLabels = "namespaceSelector needs the labels of the request's namespace, which tollgate reads only with cluster access (--kubeconfig)"

// withoutNamespaceSelector is the policy with its matchConstraints'
// namespaceSelector cleared: without cluster access tollgate cannot
// evaluate it, and need not, as the apiserver applied it before calling
// (the webhook carries it).
func withoutNamespaceSelector(p *admissionregistrationv1.MutatingAdmissionPolicy) *admissionregistrationv1.MutatingAdmissionPolicy {
	if p.Spec.MatchConstraints == nil || policy.NamesOnly(p.Spec.MatchConstraints.NamespaceSelector) {
		return p
	}
	c := p.DeepCopy()
	c.Spec.MatchConstraints.NamespaceSelector = &metav1.LabelSelector{}
	return c
}
