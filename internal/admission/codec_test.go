package admission

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
)

func TestDecodeCapturedReviews(t *testing.T) {
	tests := []struct {
		file      string
		op        Operation
		hasObject bool
		hasOld    bool
	}{
		{"testdata/review-pod-create.json", Create, true, false},
		{"testdata/review-pod-update.json", Update, true, true},
		{"testdata/review-pod-delete.json", Delete, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Decode(body)
			if err != nil {
				t.Fatal(err)
			}
			req := r.Request
			if r.APIVersion != VersionV1 || req.Operation != tt.op || req.UID == "" {
				t.Errorf("version %s op %s uid %q", r.APIVersion, req.Operation, req.UID)
			}
			if req.Kind.Kind != "Pod" || req.Resource.Resource != "pods" || req.Namespace != "shop" || req.Name != "checkout-7d9f8c6b5-x2k4q" {
				t.Errorf("identity: %+v %+v %s/%s", req.Kind, req.Resource, req.Namespace, req.Name)
			}
			if (len(req.Object()) > 0) != tt.hasObject || (len(req.OldObject()) > 0) != tt.hasOld {
				t.Errorf("object %d bytes, oldObject %d bytes", len(req.Object()), len(req.OldObject()))
			}
			if req.UserInfo.Username != "admin" {
				t.Errorf("user %q", req.UserInfo.Username)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"empty", "", "empty body"},
		{"blank", "  \n", "empty body"},
		{"not json", "{", "unexpected end of JSON input"},
		{"not json either", `{"a" 1}`, "invalid character '1' after object key"},
		{"array", "[]", "want a JSON object"},
		{"no request", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, "no request"},
		{"unknown version", `{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview","request":{"uid":"1"}}`, `apiVersion "admission.k8s.io/v2"`},
		{"wrong kind", `{"apiVersion":"admission.k8s.io/v1","kind":"Pod","request":{"uid":"1"}}`, `kind is "Pod"`},
		{"no uid", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}`, "no uid"},
		{"uid of invalid UTF-8", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"a\xf8\"}}", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.body))
			if !errors.Is(err, ErrBadReview) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrBadReview mentioning %q", err, tt.want)
			}
		})
	}
}

func TestEncode(t *testing.T) {
	patch := jsonpatch.Patch{jsonpatch.Add("/metadata/annotations", json.RawMessage(`{"a":"b"}`))}
	tests := []struct {
		name, version string
		resp          Response
		want          string
	}{
		{"allowed v1", VersionV1, Allowed(),
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u1","allowed":true}}`},
		{"allowed v1beta1", VersionV1beta1, Allowed(),
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1","response":{"uid":"u1","allowed":true}}`},
		{"denied", VersionV1, Denied("no"),
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u1","allowed":false,"status":{"metadata":{},"status":"Failure","message":"no","reason":"Forbidden","code":403}}}`},
		{"patched with warning", VersionV1, Response{Allowed: true, Patch: patch, Warnings: []string{"w"}},
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u1","allowed":true,"patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2Fubm90YXRpb25zIiwidmFsdWUiOnsiYSI6ImIifX1d","patchType":"JSONPatch","warnings":["w"]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(tt.version, "u1", tt.resp)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 100, "plain"},
		{"bell\a, escape\x1b[31m, newline\n, tab\t", 100, "bell, escape[31m, newline, tab"},
		{"bad \xff utf-8", 100, "bad  utf-8"},
		{strings.Repeat("é", 10), 9, "ééé..."}, // 6 bytes of é and 3 of dots
	}
	for _, tt := range tests {
		if got := Sanitize(tt.in, tt.max); got != tt.want {
			t.Errorf("Sanitize(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
	out, err := Encode(VersionV1, "u", Response{Code: 403, Message: "a\x1b[2Jb" + strings.Repeat("x", 10000), Warnings: []string{"w\r\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), `\u001b`) || strings.Contains(string(out), `\r`) || len(out) > MaxMessageBytes+500 {
		t.Errorf("encoded answer not sanitized: %.300s (%d bytes)", out, len(out))
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		in   []string
		want []string
	}{
		{nil, nil},
		{[]string{"short", "tab\there"}, []string{"short", "tabhere"}},
		{[]string{strings.Repeat("a", MaxWarningBytes)}, []string{strings.Repeat("a", MaxWarningBytes)}},
		{[]string{strings.Repeat("a", MaxWarningBytes+1)}, []string{strings.Repeat("a", MaxWarningBytes-3) + "..."}},
	}
	for _, tt := range tests {
		if got := Warnings(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Warnings(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Warnings in bounds are given back as they are: the engine and the codec
// both bound them, and the second pass must cost nothing.
func TestWarningsInBoundsDoNotAllocate(t *testing.T) {
	ws := []string{"p: fine", "q: also fine"}
	if got := Warnings(ws); &got[0] != &ws[0] {
		t.Error("warnings in bounds were copied")
	}
	if n := testing.AllocsPerRun(100, func() { _ = Warnings(ws) }); n != 0 {
		t.Errorf("%v allocations for warnings in bounds", n)
	}
	bad := []string{"ok", "bad\x00"}
	if got := Warnings(bad); got[1] != "bad" || bad[1] != "bad\x00" {
		t.Errorf("a warning out of bounds: got %q, and the input became %q", got, bad)
	}
}
