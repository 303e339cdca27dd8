package validatingpolicy_test

import (
	"path/filepath"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// TestApplies: a policy that does not apply says why, with no denial, as
// the apiserver admits it; one that applies through any binding is
// evaluated (and here denies).
func TestApplies(t *testing.T) {
	set, err := policy.LoadPath(filepath.Join("testdata", "applies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*validatingpolicy.Policy{}
	for _, p := range set.Policies {
		byName[p.Name()] = p.VAP
	}
	teamA := map[string]map[string]string{"shop": {"team": "a"}}
	teamB := map[string]map[string]string{"shop": {"team": "b"}}
	relabel := func(team, track string) func(map[string]any) {
		return func(r map[string]any) {
			l := labelsOf(obj(r, "object"))
			l["team"] = team
			if track != "" {
				l["track"] = track
			}
		}
	}
	denied := validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422, Failures: []string{"no pods"}}
	for _, tc := range []struct {
		name, policy string
		edit         func(map[string]any)
		namespaces   map[string]map[string]string
		want         validatingpolicy.Decision
		denial       string // the binding that denies, when want is denied
		bindings     []string
	}{
		{name: "no binding", policy: "unbound", namespaces: teamA,
			want: validatingpolicy.Decision{Matched: true, NotApplied: "no binding"}},
		{name: "binding namespace and object not selected", policy: "bound", edit: relabel("shop", ""), namespaces: teamB,
			want: validatingpolicy.Decision{Matched: true, NotApplied: "binding team-a does not select namespace shop; binding canary does not select the object's labels; binding updates does not match the request"}},
		{name: "selected by namespace", policy: "bound", edit: relabel("shop", ""), namespaces: teamA,
			want: denied, denial: "team-a", bindings: []string{"team-a"}},
		{name: "selected by object labels", policy: "bound", edit: relabel("shop", "canary"), namespaces: teamB,
			want: denied, denial: "canary", bindings: []string{"canary"}},
		{name: "selected by both", policy: "bound", edit: relabel("shop", "canary"), namespaces: teamA,
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422, Failures: []string{"no pods", "no pods"}}, denial: "team-a", bindings: []string{"team-a", "canary"}},
		{name: "match conditions false", policy: "bound", edit: relabel("payments", "canary"), namespaces: teamA,
			want: validatingpolicy.Decision{Matched: true, NotApplied: "match conditions not met: not-payments; binding updates does not match the request"}},
		{name: "the policy does not match", policy: "bound", edit: func(r map[string]any) { r["operation"] = "UPDATE"; r["oldObject"] = r["object"] }, namespaces: teamA,
			want: validatingpolicy.Decision{NotApplied: "does not match the request"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			want.Bindings = tc.bindings
			if tc.denial != "" {
				want.Denial = "ValidatingAdmissionPolicy 'bound' with binding '" + tc.denial + "' denied request: no pods"
			}
			evaluates(t, byName[tc.policy], review(t, "review-pod-create.json", tc.edit), tc.namespaces, want, true)
		})
	}
}
