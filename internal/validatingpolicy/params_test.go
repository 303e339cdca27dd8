package validatingpolicy_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// deployment is a CREATE of a Deployment by user.
func deployment(ns, name string, replicas int, labels, user string) *admission.Request {
	req := &admission.Request{
		UID: "u", Kind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Name:     name, Namespace: ns, Operation: admission.Create,
		UserInfo: admission.UserInfo{Username: user},
	}
	req.SetObjects([]byte(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q,"labels":{%s}},"spec":{"replicas":%d}}`,
		name, ns, labels, replicas)), nil)
	return req
}

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
	byName := map[string]*validatingpolicy.Policy{}
	for _, p := range set.Policies {
		byName[p.Name()] = p.VAP
	}
	for _, tc := range []struct {
		name, policy string
		req          *admission.Request
		ext          *external.Sources
		want         validatingpolicy.Decision
	}{
		{name: "named param in its namespace allows", policy: "max-replicas", req: deployment("team-a", "web", 3, "", "bob"),
			want: validatingpolicy.Decision{Matched: true}},
		{name: "named param denies with its value", policy: "max-replicas", req: deployment("team-a", "web", 4, "", "bob"),
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-shared' denied request: replicas must be at most 3",
				Failures: []string{"replicas must be at most 3"}}},
		{name: "paramRef without namespace reads the request's namespace", policy: "local-limit", req: deployment("team-a", "web", 2, "", "bob"),
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'local-limit' with binding 'local-limit' denied request: over the namespace's limit",
				Failures: []string{"over the namespace's limit"}}},
		{name: "not found with Allow: not evaluated", policy: "local-limit", req: deployment("team-b", "web", 20, "", "bob"),
			want: validatingpolicy.Decision{Matched: true, NotApplied: "binding local-limit: no param found (parameterNotFoundAction Allow)"}},
		{name: "every selected param is evaluated", policy: "forbidden-names", req: deployment("team-a", "evil", 1, "", "bob"),
			want: validatingpolicy.Decision{Matched: true,
				Warnings: []string{
					"Validation failed for ValidatingAdmissionPolicy 'forbidden-names' with binding 'forbidden-names': name evil is forbidden by forbidden-a",
					"Validation failed for ValidatingAdmissionPolicy 'forbidden-names' with binding 'forbidden-names': name evil is forbidden by forbidden-b",
				},
				Failures: []string{"name evil is forbidden by forbidden-a", "name evil is forbidden by forbidden-b"}}},
		{name: "cluster-scoped custom param kind", policy: "custom-limit", req: deployment("team-a", "web", 0, "", "bob"),
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'custom-limit' with binding 'custom-limit' denied request: replicas must be at least 1",
				Failures: []string{"replicas must be at least 1"}}},
		{name: "unknown param kind is the policy's configuration error", policy: "unknown-kind", req: deployment("team-a", "web", 1, "", "bob"),
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial: "ValidatingAdmissionPolicy 'unknown-kind' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'unknown.example.com/v1, Kind=Thing'"}},
		{name: "no params source is an error, not a pass", policy: "max-replicas", req: deployment("team-a", "web", 1, "", "bob"), ext: &external.Sources{},
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial: "ValidatingAdmissionPolicy 'max-replicas' denied request: failed to configure policy: tollgate has no params source: give cluster access (--kubeconfig) or the param objects (--params)"}},
		{name: "authorizer allows the approver", policy: "approved", req: deployment("team-a", "web", 1, `"approved":"yes"`, "alice"),
			want: validatingpolicy.Decision{Matched: true}},
		{name: "authorizer denies others", policy: "approved", req: deployment("team-b", "web", 1, `"approved":"yes"`, "alice"),
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'approved' with binding 'approved' denied request: only approvers may set the label approved",
				Failures: []string{"only approvers may set the label approved"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ext
			if tc.ext != nil {
				e = *tc.ext
			}
			got, err := validatingpolicy.Evaluate(ctx, byName[tc.policy], admissionpolicy.NewReview(tc.req), nil, e, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			// the apiserver lists selected params in no particular order
			slices.Sort(got.Warnings)
			slices.Sort(got.Failures)
			got.Bindings = nil // TestApplies checks them
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}
