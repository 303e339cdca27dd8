package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

func celEngine(t *testing.T) *Engine {
	t.Helper()
	set, err := policy.LoadPath("testdata/cel-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return New(set, Options{Namespaces: func(name string) (*corev1.Namespace, bool) { return namespaces.Of(name, nil), true }})
}

func request(t *testing.T, op admission.Operation, gvr schema.GroupVersionResource, kind, ns, user string, obj, old map[string]any) *admission.Request {
	t.Helper()
	r := &admission.Request{UID: "u", Operation: op, Resource: gvr, Kind: gvr.GroupVersion().WithKind(kind), Namespace: ns, UserInfo: admission.UserInfo{Username: user}}
	var objJSON, oldJSON []byte
	var err error
	if obj != nil {
		obj["apiVersion"], obj["kind"] = gvr.GroupVersion().String(), kind
		if objJSON, err = json.Marshal(obj); err != nil {
			t.Fatal(err)
		}
		r.Name, _ = obj["metadata"].(map[string]any)["name"].(string)
	}
	if old != nil {
		old["apiVersion"], old["kind"] = gvr.GroupVersion().String(), kind
		if oldJSON, err = json.Marshal(old); err != nil {
			t.Fatal(err)
		}
		r.Name, _ = old["metadata"].(map[string]any)["name"].(string)
	}
	r.SetObjects(objJSON, oldJSON)
	return r
}

var (
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configmapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	servicesGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

func podObj(image string) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}}}
}

func deploymentObj(image string, labels map[string]any) map[string]any {
	meta := map[string]any{"name": "web"}
	if labels != nil {
		meta["labels"] = labels
	}
	return map[string]any{"metadata": meta, "spec": map[string]any{
		"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}, "spec": podObj(image)["spec"]},
	}}
}

func TestCELPolicies(t *testing.T) {
	e := celEngine(t)
	tests := []struct {
		name         string
		req          *admission.Request
		wantCode     int32
		wantMsg      string
		wantWarning  string
		wantAudit    string
		wantOutcomes map[string]Outcome
	}{
		{name: "pinned pod", req: request(t, admission.Create, podsGVR, "Pod", "shop", "alice", podObj("app:1.2"), nil),
			wantOutcomes: map[string]Outcome{"pinned-images": Pass, "no-default-namespace": Pass}},
		{name: "latest pod denied with the expression's message and reason", req: request(t, admission.Create, podsGVR, "Pod", "shop", "alice", podObj("app:latest"), nil),
			wantCode: http.StatusUnprocessableEntity, wantMsg: `pod "web" violates policy pinned-images: image app:latest is not pinned`,
			wantOutcomes: map[string]Outcome{"pinned-images": Fail}},
		{name: "condition false: the bot is exempt", req: request(t, admission.Create, podsGVR, "Pod", "shop", "system:serviceaccount:ci:bot", podObj("app:latest"), nil),
			wantOutcomes: map[string]Outcome{"pinned-images": Skip}},
		{name: "deployment's pod template checked", req: request(t, admission.Create, deploymentsGVR, "Deployment", "shop", "alice", deploymentObj("app:latest", map[string]any{"team": "a"}), nil),
			wantCode: http.StatusUnprocessableEntity, wantMsg: `the pod template of deployment "web" violates policy pinned-images: image app:latest is not pinned`},
		{name: "warn only", req: request(t, admission.Create, deploymentsGVR, "Deployment", "shop", "alice", deploymentObj("app:1", nil), nil),
			wantWarning: "team-label: deployments should carry a team label", wantOutcomes: map[string]Outcome{"team-label": Warn, "pinned-images": Pass}},
		{name: "audit only", req: request(t, admission.Create, podsGVR, "Pod", "default", "alice", podObj("app:1"), nil),
			wantAudit: `pod "web" violates policy no-default-namespace: objects belong in a namespace of their own`, wantOutcomes: map[string]Outcome{"no-default-namespace": Warn}},
		{name: "delete guarded through oldObject", req: request(t, admission.Delete, configmapsGVR, "ConfigMap", "shop", "alice", nil, map[string]any{"metadata": map[string]any{"name": "cfg", "labels": map[string]any{"protected": "yes"}}}),
			wantCode: http.StatusForbidden, wantMsg: `configmap "cfg" violates policy delete-guard: protected config maps cannot be deleted`},
		{name: "delete of unprotected", req: request(t, admission.Delete, configmapsGVR, "ConfigMap", "shop", "alice", nil, map[string]any{"metadata": map[string]any{"name": "cfg"}}),
			wantOutcomes: map[string]Outcome{"delete-guard": Pass}},
		{name: "evaluation error under failurePolicy Ignore", req: request(t, admission.Create, servicesGVR, "Service", "shop", "alice", map[string]any{"metadata": map[string]any{"name": "s"}, "spec": map[string]any{"ports": []any{}}}, nil),
			wantOutcomes: map[string]Outcome{"fragile": Error}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := admission.Allowed()
			outcomes := map[string]Outcome{}
			var warnings, warned []string
			audits := map[string]string{}
			for _, g := range e.Set().Groups {
				ev := e.Evaluate(context.Background(), g, tt.req)
				for _, r := range ev.Results {
					if r.Outcome != Skip || strings.Contains(r.Message, "condition") {
						outcomes[r.Policy] = r.Outcome
					}
				}
				warnings = append(warnings, ev.Response.Warnings...)
				warned = append(warned, ev.Response.Warned...)
				for k, v := range ev.Response.AuditAnnotations {
					audits[k] = v
				}
				if !ev.Response.Allowed {
					resp = ev.Response
				}
			}
			if tt.wantCode == 0 && !resp.Allowed {
				t.Fatalf("denied: %s", resp)
			}
			if tt.wantCode != 0 && (resp.Allowed || resp.Code != tt.wantCode || resp.Message != tt.wantMsg) {
				t.Fatalf("got %s\nwant code %d %q", resp, tt.wantCode, tt.wantMsg)
			}
			if tt.wantWarning != "" && (len(warnings) != 1 || warnings[0] != tt.wantWarning) {
				t.Errorf("warnings %q, want %q", warnings, tt.wantWarning)
			}
			if tt.wantAudit != "" && audits["no-default-namespace"] != tt.wantAudit {
				t.Errorf("audit annotations %v", audits)
			}
			var wantWarned []string
			for p, o := range outcomes {
				if o == Warn {
					wantWarned = append(wantWarned, p)
				}
			}
			slices.Sort(warned)
			slices.Sort(wantWarned)
			if !slices.Equal(warned, wantWarned) {
				t.Errorf("Response.Warned %v, want the policies whose outcome is Warn: %v", warned, wantWarned)
			}
			for p, want := range tt.wantOutcomes {
				if outcomes[p] != want {
					t.Errorf("%s: %s, want %s (all: %v)", p, outcomes[p], want, outcomes)
				}
			}
		})
	}
}

func TestWarningsAreBounded(t *testing.T) {
	long := strings.Repeat("é", 200)
	if got := admission.Warnings([]string{long})[0]; len(got) > admission.MaxWarningBytes || !strings.HasSuffix(got, "...") || !strings.HasPrefix(got, "é") {
		t.Errorf("a warning of %d bytes: %q", len(got), got)
	}
}
