package mutatingpolicy_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/mutatingpolicy"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

const pod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"NS","labels":{"app":"web"}},
"spec":{"containers":[{"name":"app","image":"app:1"}]}}`

func podRequest(ns, object string) *admission.Request {
	req := &admission.Request{
		UID:       "u",
		Kind:      schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		Name:      "p",
		Namespace: ns,
		Operation: admission.Create,
	}
	req.SetObjects([]byte(strings.ReplaceAll(object, "NS", ns)), nil)
	return req
}

func TestMutate(t *testing.T) {
	set, err := policy.LoadPath(filepath.Join("testdata", "policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mutatingpolicy.Policy{}
	// served is the MAP on each policy's first binding webhook path.
	served := map[string]*mutatingpolicy.Policy{}
	for _, g := range set.Groups {
		byName[g.ID] = g.Policies[0].MAP
		served[g.ID] = g.BindingWebhooks[0].Group.Policies[0].MAP
	}
	tests := []struct {
		name, policy, ns, object string
		// want are JSON values at dotted paths of the mutated object; nil
		// when it must be unchanged.
		want       map[string]string
		denial     string
		errs       int
		notMatched bool
		// namespaces known: namespace team-a has the label team=a; nil
		// when tollgate has no cluster access.
		known bool
		// served: on the policy's binding webhook path, where the
		// apiserver has applied the selectors.
		served bool
		// update: the request is an UPDATE.
		update bool
	}{
		{name: "apply merges into a map", policy: "labels", ns: "default", object: pod,
			want: map[string]string{"metadata.labels": `{"app":"web","team":"platform"}`}},
		{name: "apply merges into a list by key", policy: "sidecar", ns: "default", object: pod,
			want: map[string]string{"spec.containers": `[{"image":"app:1","name":"app"},{"image":"proxy:1","name":"proxy"}]`}},
		{name: "apply merges into a list, existing item kept", policy: "sidecar", ns: "default",
			object: strings.Replace(pod, `"image":"app:1"}`, `"image":"app:1"},{"name":"proxy","image":"proxy:1","args":["-v"]}`, 1)},
		{name: "match condition false", policy: "sidecar", ns: "default",
			object: strings.Replace(pod, `"app":"web"`, `"skip":"yes"`, 1), notMatched: true},
		{name: "json patch", policy: "jsonpatch", ns: "default", object: pod,
			want: map[string]string{"spec.containers": `[{"env":[{"name":"MODE","value":"strict"}],"image":"app:1","name":"app"}]`}},
		{name: "error with failurePolicy Fail", policy: "failing", ns: "default", object: pod, errs: 1,
			denial: "policy 'failing' with binding 'failing' denied request: JSON Patch: replace operation does not apply: doc is missing path: /spec/missing/field: missing value"},
		{name: "error with failurePolicy Ignore", policy: "ignored", ns: "default", object: pod, errs: 1},
		{name: "binding selects namespace", policy: "scoped", ns: "team-a", object: pod,
			want: map[string]string{"metadata.annotations": `{"scoped":"yes"}`}},
		{name: "binding does not select namespace", policy: "scoped", ns: "team-b", object: pod, notMatched: true},
		{name: "binding selects namespace labels", policy: "team-binding", ns: "team-a", object: pod, known: true,
			want: map[string]string{"metadata.annotations": `{"team":"a"}`}},
		{name: "binding does not select namespace labels", policy: "team-binding", ns: "team-b", object: pod, known: true, notMatched: true},
		{name: "binding needs namespace labels tollgate does not have", policy: "team-binding", ns: "team-a", object: pod, errs: 1, notMatched: true,
			denial: "policy 'team-binding' with binding 'team-binding' denied request: failed to configure binding: " + mutatingpolicy.ErrNamespaceLabels},
		{name: "on the binding's path the apiserver selected the namespace", policy: "team-binding", ns: "team-b", object: pod, served: true,
			want: map[string]string{"metadata.annotations": `{"team":"a"}`}},
		{name: "policy namespace selector needs namespace labels tollgate does not have", policy: "team-policy", ns: "team-a", object: pod, errs: 1, notMatched: true,
			denial: `policy "team-policy" denied request: failed to configure policy: ` + mutatingpolicy.ErrNamespaceLabels},
		{name: "policy namespace selector on the binding's path", policy: "team-policy", ns: "team-b", object: pod, served: true,
			want: map[string]string{"metadata.annotations": `{"team":"a"}`}},
		{name: "policy namespace selector with namespace labels", policy: "team-policy", ns: "team-b", object: pod, known: true, notMatched: true},
		{name: "without namespace labels, a binding whose names rule the namespace out does not apply", policy: "team-named", ns: "team-b", object: pod, notMatched: true},
		{name: "without namespace labels, a binding whose object selector rules the object out does not apply", policy: "team-named", ns: "team-a",
			object: strings.Replace(pod, `"app":"web"`, `"app":"db"`, 1), notMatched: true},
		{name: "without namespace labels, a binding whose rules rule the request out does not apply", policy: "team-named", ns: "team-a",
			object: pod, update: true, notMatched: true},
		{name: "without namespace labels, a binding that could select the request is an error", policy: "team-named", ns: "team-a", object: pod, errs: 1, notMatched: true,
			denial: "policy 'team-named' with binding 'team-named' denied request: failed to configure binding: " + mutatingpolicy.ErrNamespaceLabels},
		{name: "with namespace labels, the binding selects", policy: "team-named", ns: "team-a", object: pod, known: true,
			want: map[string]string{"metadata.annotations": `{"team":"a"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var known namespaces.Func
			if tt.known {
				known = func(name string) (*corev1.Namespace, bool) {
					if name == "team-a" {
						return namespaces.Of(name, map[string]string{"team": "a"}), true
					}
					return nil, false
				}
			}
			m := byName[tt.policy]
			if tt.served {
				m = served[tt.policy]
			}
			req := podRequest(tt.ns, tt.object)
			if tt.update {
				req.Operation = admission.Update
				req.SetObjects(req.Object(), req.Object())
			}
			out, err := mutatingpolicy.Mutate(context.Background(), m, req, known, external.Sources{})
			if err != nil {
				t.Fatal(err)
			}
			if out.Denial != tt.denial || len(out.Errors) != tt.errs || out.Matched == tt.notMatched {
				t.Fatalf("denial %q errors %q matched %v\nwant %q, %d errors, matched %v", out.Denial, out.Errors, out.Matched, tt.denial, tt.errs, !tt.notMatched)
			}
			if out.Changed != (tt.want != nil) {
				t.Fatalf("changed = %v: %s", out.Changed, out.Object)
			}
			var got map[string]any
			if tt.want != nil {
				if err := json.Unmarshal(out.Object, &got); err != nil {
					t.Fatal(err)
				}
			}
			for path, want := range tt.want {
				var v any = got
				for _, k := range strings.Split(path, ".") {
					v = v.(map[string]any)[k]
				}
				if js, _ := json.Marshal(v); string(js) != want {
					t.Errorf("%s = %s, want %s", path, js, want)
				}
			}
		})
	}
}
