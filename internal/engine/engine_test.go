package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// captured reads a review captured from kube-apiserver 1.37.
func captured(t *testing.T, name string) *admission.Request {
	t.Helper()
	body, err := os.ReadFile("../admission/testdata/review-pod-" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := admission.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	return &r.Request
}

// edit changes the request's object through a generic JSON form.
func edit(t *testing.T, req *admission.Request, f func(obj map[string]any)) *admission.Request {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(req.Object(), &obj); err != nil {
		t.Fatal(err)
	}
	f(obj)
	out := *req
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out.SetObject(b)
	return &out
}

func labelsOf(obj map[string]any) map[string]any {
	return obj["metadata"].(map[string]any)["labels"].(map[string]any)
}

func defaults(t *testing.T) (*Engine, *policy.Group, *policy.Group) {
	t.Helper()
	set, err := policy.LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	e := New(set, Options{OwnNamespace: "tollgate-system", ExcludeNamespaces: []string{"legacy"}})
	return e, set.Group("require-environment"), set.Group("nginx-sidecar")
}

func TestValidate(t *testing.T) {
	e, validate, _ := defaults(t)
	create := captured(t, "create")
	tests := []struct {
		name     string
		req      *admission.Request
		wantCode int32 // 0: allowed
		wantMsg  string
	}{
		{"captured create has environment=prod", create, 0, ""},
		{"captured update", captured(t, "update"), 0, ""},
		{"delete is not checked", captured(t, "delete"), 0, ""},
		{"wrong value", edit(t, create, func(o map[string]any) { labelsOf(o)["environment"] = "staging" }), 403,
			`pod "checkout-7d9f8c6b5-x2k4q" violates policy require-environment: label "environment" must be one of [dev, prod], got "staging"`},
		{"missing", edit(t, create, func(o map[string]any) { delete(labelsOf(o), "environment") }), 403,
			`label "environment" is missing; it must be one of [dev, prod]`},
		{"spec is a string", edit(t, create, func(o map[string]any) { o["spec"] = "oops" }), 400, `spec must be an object, got "oops"`},
		{"labels are not strings", edit(t, create, func(o map[string]any) { labelsOf(o)["n"] = 1 }), 400, "cannot read object"},
		{"subresource", withSub(create, "status"), 0, ""},
		{"connect", withOp(create, admission.Connect), 0, ""},
		{"other resource", withResource(create, "apps", "deployments"), 0, ""},
		{"kube-system", withNamespace(edit(t, create, func(o map[string]any) { delete(labelsOf(o), "environment") }), "kube-system"), 0, ""},
		{"own namespace", withNamespace(edit(t, create, func(o map[string]any) { delete(labelsOf(o), "environment") }), "tollgate-system"), 0, ""},
		{"excluded by the operator", withNamespace(edit(t, create, func(o map[string]any) { delete(labelsOf(o), "environment") }), "legacy"), 0, ""},
		{"not excluded", withNamespace(edit(t, create, func(o map[string]any) { delete(labelsOf(o), "environment") }), "legacy-2"), 403, `label "environment" is missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.Review(context.Background(), validate, tt.req)
			if len(resp.Patch) > 0 {
				t.Errorf("validation patched: %v", resp.Patch)
			}
			if tt.wantCode == 0 {
				if !resp.Allowed {
					t.Fatalf("denied: %s", resp)
				}
				return
			}
			if resp.Allowed || resp.Code != tt.wantCode || !strings.Contains(resp.Message, tt.wantMsg) {
				t.Errorf("got %s\nwant code %d with %q", resp, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestValidateUpdateRemovingLabel(t *testing.T) {
	e, validate, _ := defaults(t)
	req := edit(t, captured(t, "update"), func(o map[string]any) { delete(labelsOf(o), "environment") })
	resp := e.Review(context.Background(), validate, req)
	if resp.Allowed || resp.Code != http.StatusForbidden || !strings.Contains(resp.Message, "is missing") {
		t.Errorf("removing the label on update: %s", resp)
	}
}

func TestMutate(t *testing.T) {
	e, _, mutate := defaults(t)
	create := captured(t, "create")
	tests := []struct {
		name      string
		req       *admission.Request
		wantPatch bool
		wantCode  int32
	}{
		{"captured create", create, true, 0},
		{"generateName pod without namespace", edit(t, create, func(o map[string]any) {
			meta := o["metadata"].(map[string]any)
			delete(meta, "name")
			delete(meta, "namespace")
			meta["generateName"] = "checkout-"
		}), true, 0},
		{"update leaves the pod as it is", captured(t, "update"), false, 0},
		{"delete", captured(t, "delete"), false, 0},
		{"opted out", edit(t, create, func(o map[string]any) {
			o["metadata"].(map[string]any)["annotations"].(map[string]any)["tollgate.dev/inject"] = "n"
		}), false, 0},
		{"spec is a string", edit(t, create, func(o map[string]any) { o["spec"] = "oops" }), false, 400},
		{"containers is an object", edit(t, create, func(o map[string]any) { o["spec"].(map[string]any)["containers"] = map[string]any{} }), false, 400},
		{"kube-public", withNamespace(create, "kube-public"), false, 0},
		{"subresource", withSub(create, "ephemeralcontainers"), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.Review(context.Background(), mutate, tt.req)
			if tt.wantCode != 0 {
				if resp.Allowed || resp.Code != tt.wantCode {
					t.Fatalf("got %s, want code %d", resp, tt.wantCode)
				}
				return
			}
			if !resp.Allowed || (len(resp.Patch) > 0) != tt.wantPatch {
				t.Fatalf("got %s, want allowed with patch=%v", resp, tt.wantPatch)
			}
			if !tt.wantPatch {
				return
			}
			pod := applyTo(t, tt.req.Object(), resp.Patch)
			before := applyTo(t, tt.req.Object(), nil)
			cs := pod.Spec.Containers
			if len(cs) != len(before.Spec.Containers)+1 || cs[len(cs)-1].Name != "sidecar-nginx" {
				t.Errorf("containers after patch: %d, want the pod's %d and sidecar-nginx last", len(cs), len(before.Spec.Containers))
			}
			if pod.Annotations["kubectl.kubernetes.io/default-container"] != "checkout" || pod.Annotations["tollgate.dev/status"] != "nginx-sidecar" {
				t.Errorf("annotations after patch: %v", pod.Annotations)
			}
		})
	}
}

func applyTo(t *testing.T, object []byte, patch jsonpatch.Patch) *corev1.Pod {
	t.Helper()
	out, err := jsonpatch.Apply(object, patch)
	if err != nil {
		t.Fatalf("%v\n%v", err, patch)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(out, &pod); err != nil {
		t.Fatal(err)
	}
	return &pod
}

func withSub(r *admission.Request, sub string) *admission.Request {
	out := *r
	out.SubResource = sub
	return &out
}

func withOp(r *admission.Request, op admission.Operation) *admission.Request {
	out := *r
	out.Operation = op
	return &out
}

func withResource(r *admission.Request, group, resource string) *admission.Request {
	out := *r
	out.Resource.Group, out.Resource.Resource = group, resource
	return &out
}

func withNamespace(r *admission.Request, ns string) *admission.Request {
	out := *r
	out.Namespace = ns
	return &out
}
