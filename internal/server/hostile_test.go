package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHostileReviewsThroughTheEngine sends the bodies of the transport's
// hostile table, and reviews whose parts disagree, to the real policy paths
// (the embedded defaults): each gets a defined answer, none a 5xx, and the
// server answers a normal review afterwards.
func TestHostileReviewsThroughTheEngine(t *testing.T) {
	ts := start(t)
	review := func(op, object, old string) string {
		r := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1","operation":"` + op +
			`","namespace":"team-a","kind":{"version":"v1","kind":"Pod"},"resource":{"version":"v1","resource":"pods"}`
		if object != "" {
			r += `,"object":` + object
		}
		if old != "" {
			r += `,"oldObject":` + old
		}
		return r + `}}`
	}
	pod := func(env string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"environment":"` + env + `"}},"spec":{"containers":[{"name":"app","image":"app:1"}]}}`
	}
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"environment":"dev"}},"spec":{"replicas":1}}`
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf(`{"name":"c%d","image":"i"}`, i)
	}
	type want struct {
		code    int  // HTTP status
		allowed bool // for 200
		status  int  // the review's status code, 0 when allowed without one
	}
	tests := []struct {
		name string
		body string
		want map[string]want // by path
	}{
		{"object and oldObject of different kinds", review("UPDATE", pod("dev"), deployment), map[string]want{
			"/validate/require-environment": {200, true, 0}, "/mutate/nginx-sidecar": {200, true, 0}}},
		{"object a Deployment, request says Pod", review("CREATE", deployment, ""), map[string]want{
			"/validate/require-environment": {200, true, 0}, "/mutate/nginx-sidecar": {200, true, 0}}},
		{"object a Deployment without the label, request says Pod", review("CREATE", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`, ""), map[string]want{
			"/validate/require-environment": {200, false, 403}, "/mutate/nginx-sidecar": {200, true, 0}}},
		{"CREATE without object", review("CREATE", "", ""), map[string]want{
			"/validate/require-environment": {200, false, 400}, "/mutate/nginx-sidecar": {200, false, 400}}},
		{"spec not an object", review("CREATE", `{"metadata":{"name":"p","labels":{"environment":"dev"}},"spec":[1]}`, ""), map[string]want{
			"/validate/require-environment": {200, false, 400}, "/mutate/nginx-sidecar": {200, false, 400}}},
		{"labels not strings", review("CREATE", `{"metadata":{"name":"p","labels":{"environment":7}}}`, ""), map[string]want{
			"/validate/require-environment": {200, false, 400}, "/mutate/nginx-sidecar": {200, false, 400}}},
		{"thousands of containers", review("CREATE", `{"metadata":{"name":"p","labels":{"environment":"dev"}},"spec":{"containers":[`+strings.Join(many, ",")+`]}}`, ""), map[string]want{
			"/validate/require-environment": {200, true, 0}, "/mutate/nginx-sidecar": {200, true, 0}}},
		{"deeply nested", review("CREATE", strings.Repeat(`{"a":`, 100000)+"1"+strings.Repeat("}", 100000), ""), map[string]want{
			"/validate/require-environment": {400, false, 0}, "/mutate/nginx-sidecar": {400, false, 0}}},
		{"number out of range", review("CREATE", `{"metadata":{"name":"p","labels":{"environment":"dev"}},"spec":{"priority":1e999999}}`, ""), map[string]want{
			"/validate/require-environment": {200, true, 0}, "/mutate/nginx-sidecar": {200, true, 0}}},
	}
	for _, tt := range tests {
		for path, w := range tt.want {
			t.Run(tt.name+path, func(t *testing.T) {
				resp, err := ts.client.Post(ts.base+path, "application/json", strings.NewReader(tt.body))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != w.code {
					t.Fatalf("HTTP %d, want %d: %.300s", resp.StatusCode, w.code, body)
				}
				if w.code != http.StatusOK {
					return
				}
				var out struct {
					Response struct {
						UID     string `json:"uid"`
						Allowed bool   `json:"allowed"`
						Status  *struct {
							Code    int    `json:"code"`
							Message string `json:"message"`
						} `json:"status"`
					} `json:"response"`
				}
				if err := json.Unmarshal(body, &out); err != nil {
					t.Fatal(err)
				}
				r := out.Response
				code := 0
				if r.Status != nil {
					code = r.Status.Code
				}
				if r.UID != "u-1" || r.Allowed != w.allowed || (!w.allowed && code != w.status) {
					t.Errorf("answer uid=%q allowed=%v code=%d, want allowed=%v code=%d: %.300s", r.UID, r.Allowed, code, w.allowed, w.status, body)
				}
			})
		}
	}
	if code, _, _ := ts.get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("readyz %d after the hostile reviews", code)
	}
}
