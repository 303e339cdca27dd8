package policy

import "testing"

// Each document goes to its dialect's reader, a policy group's unknown kind
// to none, and only documents of other groups are objects.
func TestReaders(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		kind    string
		foreign bool
	}{
		{doc: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy"}`, kind: "ValidatingAdmissionPolicy"},
		{doc: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding"}`, kind: "ValidatingAdmissionPolicyBinding"},
		{doc: `{"apiVersion":"admissionregistration.k8s.io/v1beta1","kind":"MutatingAdmissionPolicy"}`, kind: "MutatingAdmissionPolicy"},
		{doc: `{"apiVersion":"policies.kyverno.io/v1","kind":"ValidatingPolicy"}`, kind: "ValidatingPolicy"},
		// Of a policy group but no kind a reader has: not an object, so
		// tollgate's decoder refuses it by name.
		{doc: `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration"}`},
		{doc: `{"apiVersion":"tollgate.dev/v1alpha1","kind":"Policy"}`},
		{doc: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}`, foreign: true},
		{doc: `{"apiVersion":"templates.gatekeeper.sh/v1","kind":"ConstraintTemplate"}`, kind: "ConstraintTemplate"},
		{doc: `{"apiVersion":"constraints.gatekeeper.sh/v1beta1","kind":"K8sRequiredLabels"}`, kind: "Constraint"},
		// Gatekeeper's other objects are refused by name, never objects.
		{doc: `{"apiVersion":"mutations.gatekeeper.sh/v1","kind":"Assign"}`, kind: "Assign"},
		{doc: `{"apiVersion":"syncset.gatekeeper.sh/v1alpha1","kind":"SyncSet"}`, kind: "SyncSet"},
		{doc: `{"apiVersion":"externaldata.gatekeeper.sh/v1beta1","kind":"Provider"}`, kind: "Provider"},
		{doc: `{"apiVersion":"config.gatekeeper.sh/v1alpha1","kind":"Config"}`, kind: "Config"},
		// A kind of Config's group that is not Config: tollgate's decoder
		// refuses it by name.
		{doc: `{"apiVersion":"config.gatekeeper.sh/v1alpha1","kind":"Other"}`},
	} {
		kind, decode := readerOf([]byte(tc.doc))
		if kind != tc.kind || (decode != nil) != (tc.kind != "") {
			t.Errorf("%s: read as %q (decoder %v), want %q", tc.doc, kind, decode != nil, tc.kind)
		}
		if got := foreign([]byte(tc.doc)) != nil; got != tc.foreign {
			t.Errorf("%s: foreign %v, want %v", tc.doc, got, tc.foreign)
		}
	}
}
