package registration

import (
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/golden"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestBuildMAP: a MutatingAdmissionPolicy has a mutating webhook entry per
// distinct selectors of its bindings, on the first binding's path, with the
// policy's and the bindings' selectors ANDed (and the excluded
// namespaces), its rules ("*" as CREATE, UPDATE and CONNECT, never
// DELETE), failure and reinvocation policy; none without bindings. The
// whole configuration is testdata/map-bindings.golden.yaml.
func TestBuildMAP(t *testing.T) {
	set, err := policy.LoadPath(filepath.Join("testdata", "map-bindings.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m, v, err := Build(set, Options{URL: "https://tollgate:8443", CABundle: []byte("CA"), ExcludedNamespaces: []string{"kube-system"}})
	if err != nil {
		t.Fatal(err)
	}
	if v != nil || m == nil {
		t.Fatalf("configurations %v %v", m, v)
	}
	want := []string{
		"prod.binding.map.tollgate.dev at https://tollgate:8443/mutate/pod-proxy/prod",
		"web.binding.map.tollgate.dev at https://tollgate:8443/mutate/pod-proxy/web",
		"team-a.binding.map.tollgate.dev at https://tollgate:8443/mutate/team-labels/team-a",
	}
	var got []string
	for _, w := range m.Webhooks {
		got = append(got, w.Name+" at "+*w.ClientConfig.URL)
		if sel := w.NamespaceSelector; len(sel.MatchLabels) == 0 || sel.MatchExpressions[len(sel.MatchExpressions)-1].Values[0] != "kube-system" {
			t.Errorf("%s: namespaceSelector %v lacks the bindings' labels or the excluded namespaces", w.Name, sel)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("webhooks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ops := m.Webhooks[0].Rules[0].Operations; len(ops) != 3 || ops[0] != "CREATE" || ops[1] != "UPDATE" || ops[2] != "CONNECT" ||
		*m.Webhooks[0].FailurePolicy != admissionregistrationv1.Ignore || *m.Webhooks[0].ReinvocationPolicy != admissionregistrationv1.IfNeededReinvocationPolicy {
		t.Errorf("rules or policies of %s", mustYAML(t, m.Webhooks[0]))
	}
	out, err := YAML(m)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "map-bindings.golden.yaml"), out)
}
