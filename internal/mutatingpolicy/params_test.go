package mutatingpolicy_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/mutatingpolicy"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestParamsAndAuthorizer runs parameterized MutatingAdmissionPolicies with
// params and RBAC objects read offline, by the same code as in a cluster.
func TestParamsAndAuthorizer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set, err := policy.LoadPath(filepath.Join("testdata", "params.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ext, err := offline.External(ctx, set, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mutatingpolicy.Policy{}
	for _, p := range set.Policies {
		byName[p.Name()] = p.MAP
	}
	for _, tc := range []struct {
		name, policy, ns, user string
		ext                    *external.Sources
		// labels and annotations of the mutated Pod; nil when unchanged.
		labels, annotations map[string]string
		denial              string
	}{
		{name: "named param in the request's namespace", policy: "tier", ns: "team-a",
			labels: map[string]string{"app": "web", "tier": "gold"}},
		{name: "param not found, Deny", policy: "tier", ns: "team-b",
			denial: "policy 'tier' with binding 'tier-local' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"},
		{name: "param not found, Allow", policy: "tier", ns: "team-c"},
		{name: "every param a selector matches", policy: "notes", ns: "team-a",
			annotations: map[string]string{"note-a": "first", "note-b": "second"}},
		{name: "no params source is an error, never a skip", policy: "tier", ns: "team-a", ext: &external.Sources{},
			denial: "policy \"tier\" denied request: failed to configure policy: tollgate has no params source: give cluster access (--kubeconfig) or the param objects (--params)"},
		{name: "authorizer allows by RBAC", policy: "approver", ns: "team-a", user: "alice",
			annotations: map[string]string{"approver": "true"}},
		{name: "authorizer denies without a binding", policy: "approver", ns: "team-a", user: "bob",
			annotations: map[string]string{"approver": "false"}},
		{name: "authorizer denies in another namespace", policy: "approver", ns: "team-b", user: "alice",
			annotations: map[string]string{"approver": "false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ext
			if tc.ext != nil {
				e = *tc.ext
			}
			req := podRequest(tc.ns, pod)
			req.UserInfo.Username = tc.user
			out, err := mutatingpolicy.Mutate(ctx, byName[tc.policy], req, nil, e)
			if err != nil {
				t.Fatal(err)
			}
			if out.Denial != tc.denial {
				t.Fatalf("denial %q (errors %q)\nwant %q", out.Denial, out.Errors, tc.denial)
			}
			if out.Changed != (tc.labels != nil || tc.annotations != nil) {
				t.Fatalf("changed = %v: %s (errors %q)", out.Changed, out.Object, out.Errors)
			}
			if !out.Changed {
				return
			}
			var got struct {
				Metadata struct {
					Labels      map[string]string `json:"labels"`
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(out.Object, &got); err != nil {
				t.Fatal(err)
			}
			wantLabels := tc.labels
			if wantLabels == nil {
				wantLabels = map[string]string{"app": "web"}
			}
			if !reflect.DeepEqual(got.Metadata.Labels, wantLabels) || !reflect.DeepEqual(got.Metadata.Annotations, tc.annotations) {
				t.Errorf("labels %v annotations %v\nwant %v, %v", got.Metadata.Labels, got.Metadata.Annotations, wantLabels, tc.annotations)
			}
		})
	}
}
