package registration

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestReinvocation: injection webhooks are never reinvoked, label,
// annotation and CEL mutations are IfNeeded, a MutatingAdmissionPolicy
// keeps its own.
func TestReinvocation(t *testing.T) {
	set, err := policy.LoadPath("testdata/reinvocation.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := Build(set, Options{URL: "https://a", CABundle: []byte("CA")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]admissionregistrationv1.ReinvocationPolicyType{
		"sidecar.mutate.tollgate.dev":       admissionregistrationv1.NeverReinvocationPolicy,
		"owner-labels.mutate.tollgate.dev":  admissionregistrationv1.IfNeededReinvocationPolicy,
		"never.binding.map.tollgate.dev":    admissionregistrationv1.NeverReinvocationPolicy,
		"ifneeded.binding.map.tollgate.dev": admissionregistrationv1.IfNeededReinvocationPolicy,
	}
	got := map[string]admissionregistrationv1.ReinvocationPolicyType{}
	for _, w := range m.Webhooks {
		got[w.Name] = *w.ReinvocationPolicy
	}
	for name, r := range want {
		if got[name] != r {
			t.Errorf("%s: reinvocationPolicy %q, want %q (webhooks: %v)", name, got[name], r, got)
		}
	}
}
