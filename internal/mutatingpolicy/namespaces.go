package mutatingpolicy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// errNamespaceLabels is why a policy or binding cannot be evaluated without
// cluster access; the policy's failurePolicy decides, tollgate never
// guesses.
const errNamespaceLabels = "namespaceSelector needs the labels of the request's namespace, which tollgate reads only with cluster access (--kubeconfig)"

// byName is m as tollgate can match it without the labels of the request's
// namespace: with its namespaceSelector cut to its requirements on
// kubernetes.io/metadata.name. labels tells whether it cut any: a match is
// then only "could select", and an error (errNamespaceLabels); no match
// means m could select no namespace of that name, and no error, as the
// apiserver reports a selector's error only for a request the rest of m
// matches.
func byName(m *admissionregistrationv1.MatchResources) (_ *admissionregistrationv1.MatchResources, labels bool) {
	if m == nil {
		return m, false
	}
	names, labels := policy.NamesPart(m.NamespaceSelector)
	if !labels {
		return m, false
	}
	c := *m
	c.NamespaceSelector = names
	return &c, true
}

// definitionByName is byName for a policy's matchConstraints.
func definitionByName(def *admissionregistrationv1.MutatingAdmissionPolicy) (*admissionregistrationv1.MutatingAdmissionPolicy, bool) {
	mc, labels := byName(def.Spec.MatchConstraints)
	if !labels {
		return def, false
	}
	c := *def
	c.Spec.MatchConstraints = mc
	return &c, true
}

// bindingByName is byName for a binding's matchResources.
func bindingByName(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) (*admissionregistrationv1.MutatingAdmissionPolicyBinding, bool) {
	m, labels := byName(b.Spec.MatchResources)
	if !labels {
		return b, false
	}
	c := *b
	c.Spec.MatchResources = m
	return &c, true
}
