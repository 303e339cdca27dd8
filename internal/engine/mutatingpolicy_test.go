package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestMAP: a MutatingAdmissionPolicy's answer is a JSON Patch that turns
// the object received into the object the policy made; a failure under
// failurePolicy Fail refuses with the apiserver's message.
func TestMAP(t *testing.T) {
	set, err := policy.LoadPath("../mutatingpolicy/testdata/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := New(set, Options{})
	ctx := context.Background()
	tests := []struct {
		group, want, denial string
		outcome             Outcome
	}{
		{"labels", `"labels":{"app":"web","team":"platform"}`, "", Pass},
		{"sidecar", `{"image":"proxy:1","name":"proxy"}`, "", Pass},
		{"failing", "", "policy 'failing' with binding 'failing' denied request: JSON Patch", Fail},
		{"ignored", "", "", Warn},
		{"scoped", "", "", Skip},
	}
	for _, tt := range tests {
		t.Run(tt.group, func(t *testing.T) {
			g := set.Group(tt.group)
			if g == nil || g.Kind != policy.GroupMAP {
				t.Fatalf("no MAP group %s", tt.group)
			}
			obj := map[string]any{"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app:1"}}}}
			req := request(t, admission.Create, podsGVR, "Pod", "default", "u", obj, nil)
			ev := e.Evaluate(ctx, g, req)
			if len(ev.Results) != 1 || ev.Results[0].Outcome != tt.outcome {
				t.Fatalf("results %+v, want %s", ev.Results, tt.outcome)
			}
			if tt.denial != "" {
				if ev.Response.Allowed || !strings.HasPrefix(ev.Response.Message, tt.denial) || ev.Response.Code != 403 {
					t.Fatalf("response %+v, want denied %q", ev.Response, tt.denial)
				}
				return
			}
			if !ev.Response.Allowed || (tt.want == "") != (len(ev.Response.Patch) == 0) {
				t.Fatalf("response %+v", ev.Response)
			}
			if tt.want == "" {
				return
			}
			patched, err := jsonpatch.Apply(req.Object(), ev.Response.Patch)
			if err != nil {
				t.Fatal(err)
			}
			var v any // normalized: keys sorted
			if err := json.Unmarshal(patched, &v); err != nil {
				t.Fatal(err)
			}
			norm, _ := json.Marshal(v)
			if !strings.Contains(string(norm), tt.want) {
				t.Errorf("patched %s\nwant it to contain %s", norm, tt.want)
			}
		})
	}
}
