package inject

import (
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestOptOutRestricted: the Pod's annotation is a request; each policy's
// optOut decides, from the namespace's labels, whether it is granted.
func TestOptOutRestricted(t *testing.T) {
	set, err := policy.LoadPath("testdata/optout-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	optingOut := []byte(`{"metadata":{"name":"web","annotations":{"tollgate.dev/inject":"false"}},"spec":{"containers":[{"name":"app","image":"app:1"}]}}`)
	plain := []byte(`{"metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"app:1"}]}}`)
	allowing := map[string]string{"kubernetes.io/metadata.name": "team-a", "tollgate.dev/allow-opt-out": "true"}
	other := map[string]string{"kubernetes.io/metadata.name": "team-b", "tollgate.dev/allow-opt-out": "yes"}
	for _, tc := range []struct {
		name      string
		pod       []byte
		nsLabels  map[string]string
		applied   []string
		optedOut  []string
		warnedFor []string
	}{
		{name: "no annotation: every policy injects", pod: plain, nsLabels: other,
			applied: []string{"anyone", "allowed-namespaces", "mandatory"}},
		{name: "annotation in an allowing namespace", pod: optingOut, nsLabels: allowing,
			applied: []string{"mandatory"}, optedOut: []string{"anyone", "allowed-namespaces"}, warnedFor: []string{"mandatory"}},
		{name: "annotation elsewhere", pod: optingOut, nsLabels: other,
			applied: []string{"allowed-namespaces", "mandatory"}, optedOut: []string{"anyone"}, warnedFor: []string{"allowed-namespaces", "mandatory"}},
		{name: "annotation, namespace labels unknown", pod: optingOut, nsLabels: nil,
			applied: []string{"allowed-namespaces", "mandatory"}, optedOut: []string{"anyone"}, warnedFor: []string{"allowed-namespaces", "mandatory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Inject(Params{Pod: decodePod(t, tc.pod), Policies: set.Policies, Namespace: "team-x", NamespaceLabels: tc.nsLabels})
			if got := res.Applied(); !slices.Equal(got, tc.applied) {
				t.Errorf("applied = %v, want %v", got, tc.applied)
			}
			if got := res.names(OptedOut); !slices.Equal(got, tc.optedOut) {
				t.Errorf("opted out of %v, want %v", got, tc.optedOut)
			}
			var warned []string
			for _, o := range res.Effects {
				if o.Warning != "" {
					warned = append(warned, o.Policy)
				}
			}
			if !slices.Equal(warned, tc.warnedFor) {
				t.Errorf("warnings for %v, want %v: %q", warned, tc.warnedFor, res.Warnings())
			}
			for _, w := range res.Warnings() {
				if want := "does not allow opting out with tollgate.dev/inject in namespace team-x; the pod gets its injection"; !strings.Contains(w, want) {
					t.Errorf("warning %q does not say %q", w, want)
				}
			}
			patched := applyPatch(t, tc.pod, res.Patch)
			assertKeepsOriginal(t, tc.pod, patched)
			// The status lists what was injected; a second pass adds nothing,
			// whatever the annotation says.
			again := Inject(Params{Pod: decodePod(t, patched), Policies: set.Policies, Namespace: "team-x", NamespaceLabels: tc.nsLabels})
			if len(again.Patch) != 0 {
				t.Errorf("second injection patched again: %v", again.Patch)
			}
		})
	}
}
