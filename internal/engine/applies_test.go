package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestApplies: for every kind of policy, one that does not apply to a
// request (no binding, a binding or selector not selecting its namespace
// or labels, a match condition false, an exempt namespace) gives a skip
// marked not applicable with the reason, admits the request unchanged as
// the apiserver does, and is not among the policies that acted on it
// (metrics); where it applies, it refuses or changes the ConfigMap.
func TestApplies(t *testing.T) {
	set, err := policy.LoadPath("testdata/applies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	namespaces := namespaces.Func(func(name string) (*corev1.Namespace, bool) {
		labels := map[string]map[string]string{"team-a": {"team": "a"}, "team-b": {"team": "b"}}[name]
		return namespaces.Of(name, labels), labels != nil
	})
	e := New(set, Options{Namespaces: namespaces})
	configMap := func(ns string, labels map[string]any) *admission.Request {
		meta := map[string]any{"name": "settings", "namespace": ns}
		if labels != nil {
			meta["labels"] = labels
		}
		obj := map[string]any{"metadata": meta, "data": map[string]any{"password": "hunter2"}}
		return request(t, admission.Create, configmapsGVR, "ConfigMap", ns, "alice", obj, nil)
	}
	canary := map[string]any{"track": "canary"}
	exempt := map[string]any{"track": "canary", "exempt": "yes"}
	for _, tc := range []struct {
		name, policy string
		req          *admission.Request
		why          string // empty: the policy applies
	}{
		// ValidatingAdmissionPolicy
		{"vap: no binding", "vap-unbound", configMap("team-a", nil), "no binding"},
		{"vap: binding namespace not selected", "vap", configMap("team-b", nil),
			"binding vap-team-a does not select namespace team-b; binding vap-canary does not select the object's labels"},
		{"vap: selected by namespace", "vap", configMap("team-a", nil), ""},
		{"vap: selected by object labels", "vap", configMap("team-b", canary), ""},
		{"vap: match conditions false", "vap", configMap("team-b", exempt), "binding vap-team-a does not select namespace team-b; match conditions not met: not-exempt"},
		{"vap: system namespace", "vap", configMap("kube-system", canary), "namespace kube-system is exempt"},
		// MutatingAdmissionPolicy
		{"map: no binding", "map-unbound", configMap("team-a", nil), "no binding"},
		{"map: binding namespace not selected", "map", configMap("team-b", nil),
			"binding map-team-a does not select namespace team-b; binding map-canary does not select the object's labels"},
		{"map: selected by namespace", "map", configMap("team-a", nil), ""},
		{"map: selected by object labels", "map", configMap("team-b", canary), ""},
		{"map: match conditions false", "map", configMap("team-a", exempt), "match conditions not met: not-exempt"},
		{"map: system namespace", "map", configMap("kube-system", canary), "namespace kube-system is exempt"},
		// tollgate policies, validating and mutating
		{"validate: namespace not selected", "validate-team-a", configMap("team-b", nil), "namespace team-b is not selected"},
		{"validate: selected", "validate-team-a", configMap("team-a", nil), ""},
		{"validate: object selector", "validate-canary", configMap("team-a", nil), "objectSelector does not select the object's labels"},
		{"validate: selected by object labels", "validate-canary", configMap("team-b", canary), ""},
		{"validate: match conditions false", "validate-team-a", configMap("team-a", exempt), "match conditions not met: not-exempt"},
		{"validate: system namespace", "validate-canary", configMap("kube-system", canary), "namespace kube-system is exempt"},
		{"mutate: namespace not selected", "mutate-team-a", configMap("team-b", nil), "namespace team-b is not selected"},
		{"mutate: selected", "mutate-team-a", configMap("team-a", nil), ""},
		{"mutate: match conditions false", "mutate-team-a", configMap("team-a", exempt), "match conditions not met: not-exempt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := groupOf(t, set, tc.policy)
			ev := e.Evaluate(context.Background(), g, tc.req)
			r := resultOf(t, ev, tc.policy)
			acted := slices.Contains(ev.Response.Policies, tc.policy)
			if tc.why != "" {
				if r.Applies() || r.Outcome != Skip || r.Message != tc.why {
					t.Errorf("result %+v, want a skip that does not apply: %q", r, tc.why)
				}
				if !ev.Response.Allowed || len(ev.Response.Patch) > 0 || acted {
					t.Errorf("response %+v: want allowed, unchanged, without %s among the policies that acted", ev.Response, tc.policy)
				}
				return
			}
			if !r.Applies() || !acted {
				t.Fatalf("result %+v, policies %v: want %s applied", r, ev.Response.Policies, tc.policy)
			}
			if strings.HasPrefix(tc.policy, "mutate") || strings.HasPrefix(tc.policy, "map") {
				if r.Outcome != Pass || len(ev.Response.Patch) == 0 {
					t.Errorf("result %+v, patch %v: want the ConfigMap changed", r, ev.Response.Patch)
				}
				return
			}
			if r.Outcome != Fail || ev.Response.Allowed || !strings.Contains(r.Message, "no passwords in ConfigMaps") {
				t.Errorf("result %+v, allowed %v: want the password refused", r, ev.Response.Allowed)
			}
		})
	}
}

// groupOf is the group that holds the named policy (evaluated with every
// binding: the engine knows the namespaces).
func groupOf(t *testing.T, set *policy.Set, name string) *policy.Group {
	t.Helper()
	for _, g := range set.Groups {
		for _, p := range g.Policies {
			if p.Name() == name {
				return g
			}
		}
	}
	t.Fatalf("no group holds %s", name)
	return nil
}

func resultOf(t *testing.T, ev Evaluation, name string) Result {
	t.Helper()
	for _, r := range ev.Results {
		if r.Policy == name {
			return r
		}
	}
	t.Fatalf("no result for %s in %+v", name, ev.Results)
	return Result{}
}
