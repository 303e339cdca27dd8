package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

func mutateEngine(t *testing.T) *Engine {
	t.Helper()
	set, err := policy.LoadPath("testdata/mutate-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return New(set, Options{})
}

// review runs every group over req and applies each patch, as the
// apiserver does; it returns the final object and the warnings.
func review(t *testing.T, e *Engine, req *admission.Request) (map[string]any, []string, int) {
	t.Helper()
	doc := req.Object()
	var warnings []string
	ops := 0
	for _, g := range e.Set().Groups {
		r := *req
		r.SetObject(doc)
		resp := e.Review(context.Background(), g, &r)
		if !resp.Allowed {
			t.Fatalf("%s denied: %s", g.ID, resp.Message)
		}
		warnings = append(warnings, resp.Warnings...)
		if len(resp.Patch) > 0 {
			var err error
			if doc, err = jsonpatch.Apply(doc, resp.Patch); err != nil {
				t.Fatalf("%s: %v", g.ID, err)
			}
			ops += len(resp.Patch)
		}
	}
	var out map[string]any
	if err := json.Unmarshal(doc, &out); err != nil {
		t.Fatal(err)
	}
	return out, warnings, ops
}

func TestMutations(t *testing.T) {
	e := mutateEngine(t)
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	dep := map[string]any{
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"team": "payments"}, "annotations": map[string]any{"kept": "yes"}},
		"spec": map[string]any{"futureField": true, "template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "a", "image": "a:1"},
			map[string]any{"name": "b", "image": "b:1", "imagePullPolicy": "Always"},
		}}}},
	}
	req := request(t, admission.Create, gvr, "Deployment", "shop", "alice", dep, nil)
	out, warnings, ops := review(t, e, req)
	meta := out["metadata"].(map[string]any)
	labels, ann := meta["labels"].(map[string]any), meta["annotations"].(map[string]any)
	if labels["team"] != "payments" || labels["tier"] != "backend" {
		t.Errorf("labels %v: an existing label must be kept, a missing one set", labels)
	}
	if ann["kept"] != "yes" || ann["example.com/owner"] != "platform-team" || ann["team.example.com/contact"] != "#platform" {
		t.Errorf("annotations %v", ann)
	}
	containers := out["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	if containers[0].(map[string]any)["imagePullPolicy"] != "IfNotPresent" || containers[1].(map[string]any)["imagePullPolicy"] != "Always" {
		t.Errorf("containers %v", containers)
	}
	if out["spec"].(map[string]any)["futureField"] != true {
		t.Error("a field tollgate does not know was lost")
	}
	if len(warnings) != 0 || ops == 0 {
		t.Errorf("warnings %v, ops %d", warnings, ops)
	}

	t.Run("idempotent", func(t *testing.T) {
		again, _ := json.Marshal(out)
		r := *req
		r.SetObject(again)
		if _, _, ops := review(t, e, &r); ops != 0 {
			t.Errorf("a second pass patched %d operations", ops)
		}
	})
	t.Run("no labels at all", func(t *testing.T) {
		cm := request(t, admission.Create, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap", "shop", "alice",
			map[string]any{"metadata": map[string]any{"name": "c"}}, nil)
		out, _, _ := review(t, e, cm)
		if l := out["metadata"].(map[string]any)["labels"].(map[string]any); l["team"] != "platform" || l["tier"] != "backend" {
			t.Errorf("labels %v", l)
		}
	})
	t.Run("overwrite", func(t *testing.T) {
		svc := request(t, admission.Update, schema.GroupVersionResource{Version: "v1", Resource: "services"}, "Service", "shop", "alice",
			map[string]any{"metadata": map[string]any{"name": "s", "labels": map[string]any{"tier": "internal"}}}, map[string]any{"metadata": map[string]any{"name": "s"}})
		out, _, _ := review(t, e, svc)
		if l := out["metadata"].(map[string]any)["labels"].(map[string]any); l["tier"] != "edge" {
			t.Errorf("labels %v", l)
		}
	})
	t.Run("a patch that cannot apply is never sent", func(t *testing.T) {
		sec := request(t, admission.Create, schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "Secret", "shop", "alice",
			map[string]any{"metadata": map[string]any{"name": "s"}}, nil)
		_, warnings, ops := review(t, e, sec)
		if ops != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "policy broken-patch not applied") {
			t.Errorf("ops %d warnings %v", ops, warnings)
		}
	})
}
