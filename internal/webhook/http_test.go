package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/admission"
)

const reviewV1 = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"uid-1","operation":"CREATE","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"ns","object":{"metadata":{"name":"p"}}}}`

var reviewV1beta1 = strings.Replace(reviewV1, "admission.k8s.io/v1", "admission.k8s.io/v1beta1", 1)

func allowAll(context.Context, *admission.Request) admission.Response { return admission.Allowed() }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// chunked hides the body's length, so only the limited reader can catch it.
type chunked struct{ io.Reader }

func TestTransport(t *testing.T) {
	big := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":{"pad":"` + strings.Repeat("x", DefaultMaxBodyBytes) + `"}}}`
	tests := []struct {
		name        string
		method      string
		contentType string
		body        io.Reader
		wantCode    int
		wantBody    string
		wantVersion string
	}{
		{"GET", http.MethodGet, "application/json", strings.NewReader(reviewV1), 405, "POST", ""},
		{"PUT", http.MethodPut, "application/json", strings.NewReader(reviewV1), 405, "POST", ""},
		{"no content type", http.MethodPost, "", strings.NewReader(reviewV1), 415, "Content-Type", ""},
		{"text/plain", http.MethodPost, "text/plain", strings.NewReader(reviewV1), 415, "Content-Type", ""},
		{"yaml", http.MethodPost, "application/yaml", strings.NewReader(reviewV1), 415, "Content-Type", ""},
		{"empty body", http.MethodPost, "application/json", strings.NewReader(""), 400, "empty body", ""},
		{"malformed", http.MethodPost, "application/json", strings.NewReader(`{"apiVersion":`), 400, "bad admission review", ""},
		{"no request", http.MethodPost, "application/json", strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), 400, "no request", ""},
		{"unknown version", http.MethodPost, "application/json", strings.NewReader(strings.Replace(reviewV1, "admission.k8s.io/v1", "admission.k8s.io/v2", 1)), 400, "admission.k8s.io/v2", ""},
		{"too large, declared", http.MethodPost, "application/json", strings.NewReader(big), 413, "over the limit", ""},
		{"too large, chunked", http.MethodPost, "application/json", chunked{strings.NewReader(big)}, 413, "over the limit", ""},
		{"v1", http.MethodPost, "application/json", strings.NewReader(reviewV1), 200, `"uid":"uid-1"`, "admission.k8s.io/v1"},
		{"v1beta1", http.MethodPost, "application/json", strings.NewReader(reviewV1beta1), 200, `"uid":"uid-1"`, "admission.k8s.io/v1beta1"},
		{"charset parameter", http.MethodPost, "application/json; charset=utf-8", strings.NewReader(reviewV1), 200, `"allowed":true`, "admission.k8s.io/v1"},
	}
	srv := httptest.NewServer(New(admission.HandlerFunc(allowAll), Options{Logger: quiet()}))
	defer srv.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+"/validate/x", tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.wantCode, body)
			}
			if !bytes.Contains(body, []byte(tt.wantBody)) {
				t.Errorf("body %s does not contain %s", body, tt.wantBody)
			}
			if tt.wantCode == 405 && resp.Header.Get("Allow") != http.MethodPost {
				t.Errorf("Allow header %q", resp.Header.Get("Allow"))
			}
			if tt.wantVersion != "" {
				var out struct {
					APIVersion string `json:"apiVersion"`
					Kind       string `json:"kind"`
				}
				if err := json.Unmarshal(body, &out); err != nil || out.APIVersion != tt.wantVersion || out.Kind != "AdmissionReview" {
					t.Errorf("answered as %+v (%v), want %s AdmissionReview", out, err, tt.wantVersion)
				}
			}
		})
	}
}

func TestPanicBecomesDenial(t *testing.T) {
	calls := 0
	h := admission.HandlerFunc(func(ctx context.Context, req *admission.Request) admission.Response {
		calls++
		if calls == 1 {
			var m map[string]int
			//lint:ignore SA5000 the test wants this real runtime panic
			m["boom"]++ // nil map write: a real runtime panic
		}
		return admission.Allowed()
	})
	var logs bytes.Buffer
	srv := httptest.NewServer(New(h, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	defer srv.Close()

	post := func() map[string]any {
		resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(reviewV1))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d, want 200", resp.StatusCode)
		}
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out["response"].(map[string]any)
	}
	first := post()
	if first["allowed"] != false || first["uid"] != "uid-1" {
		t.Errorf("after a panic: %v, want allowed=false with the uid", first)
	}
	if status, _ := first["status"].(map[string]any); status["code"] != float64(500) {
		t.Errorf("status = %v, want code 500", first["status"])
	}
	if second := post(); second["allowed"] != true {
		t.Errorf("server did not go on after a panic: %v", second)
	}
	if !strings.Contains(logs.String(), "panic in admission handler") {
		t.Error("the panic was not logged")
	}
}

func TestOneLogLinePerReview(t *testing.T) {
	var logs bytes.Buffer
	h := admission.HandlerFunc(func(context.Context, *admission.Request) admission.Response {
		r := admission.Denied("pod \"p\" violates policy x: nope")
		r.Policies = []string{"x"}
		return r
	})
	srv := httptest.NewServer(New(h, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL+"/validate/x", "application/json", strings.NewReader(reviewV1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d log lines, want 1:\n%s", len(lines), logs.String())
	}
	var entry map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &entry); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"uid", "kind", "namespace", "name", "operation", "user", "decision", "policies", "patchOps", "latencyMs"} {
		if _, ok := entry[key]; !ok {
			t.Errorf("log line lacks %q: %s", key, lines[0])
		}
	}
	if entry["decision"] != "denied" || entry["uid"] != "uid-1" {
		t.Errorf("log line: %s", lines[0])
	}
	if strings.Contains(lines[0], `"object"`) {
		t.Error("the object was logged at info level")
	}
}

// TestHostileBodies: bodies built to hurt a parser get a defined answer and
// the endpoint keeps serving.
func TestHostileBodies(t *testing.T) {
	wrap := func(object string) string {
		return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","kind":{"version":"v1","kind":"Pod"},"resource":{"version":"v1","resource":"pods"},"object":` + object + `}}`
	}
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf(`{"name":"c%d","image":"i"}`, i)
	}
	tests := []struct {
		name, body string
		code       int
	}{
		{"deeply nested", wrap(strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)), 400},
		{"deeply nested arrays", wrap(`{"spec":` + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + `}`), 400},
		{"thousands of containers", wrap(`{"metadata":{"name":"p"},"spec":{"containers":[` + strings.Join(many, ",") + `]}}`), 200},
		{"duplicate keys", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","uid":"b"}}`, 200},
		{"invalid UTF-8", wrap("{\"metadata\":{\"name\":\"\xff\xfe\"}}"), 200},
		{"raw control character", wrap("{\"metadata\":{\"name\":\"a\x01b\"}}"), 400},
		{"number out of range", wrap(`{"spec":{"replicas":1e999999}}`), 200},
		{"object of another kind than the request", wrap(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`), 200},
	}
	srv := httptest.NewServer(New(admission.HandlerFunc(allowAll), Options{Logger: quiet()}))
	defer srv.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code {
				t.Errorf("status %d, want %d: %.200s", resp.StatusCode, tt.code, body)
			}
		})
	}
	resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(reviewV1))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the endpoint stopped serving: %v", err)
	}
	resp.Body.Close()
}
