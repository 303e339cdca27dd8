package mutatingpolicy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/namespaces"
)

// errNamespaceLabels is why a policy or binding cannot be evaluated without
// cluster access; the policy's failurePolicy decides, tollgate never
// guesses.
const errNamespaceLabels = "namespaceSelector needs the labels of the request's namespace, which tollgate reads only with cluster access (--kubeconfig)"

// byName is obj (a policy or a binding, whose match resources are m, set
// in a copy by set) as tollgate can match it without the labels of the
// request's namespace: with its namespaceSelector cut to its requirements on
// kubernetes.io/metadata.name. labels tells whether it cut any: a match is
// then only "could select", and an error (errNamespaceLabels); no match
// means obj could select no namespace of that name, and no error, as the
// apiserver reports a selector's error only for a request the rest of the
// match resources match.
func byName[T any](obj *T, m *admissionregistrationv1.MatchResources, set func(*T, *admissionregistrationv1.MatchResources)) (_ *T, labels bool) {
	if m == nil {
		return obj, false
	}
	names, labels := namespaces.NamesPart(m.NamespaceSelector)
	if !labels {
		return obj, false
	}
	cm, c := *m, *obj
	cm.NamespaceSelector = names
	set(&c, &cm)
	return &c, true
}
