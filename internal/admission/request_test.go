package admission

import (
	"reflect"
	"strings"
	"testing"
)

func TestRequestMeta(t *testing.T) {
	tests := []struct {
		name      string
		obj, old  string // "" for none
		wantName  string
		wantOld   bool
		wantError string
	}{
		{"object", `{"metadata":{"name":"a","labels":{"x":"y"}}}`, "", "a", false, ""},
		{"object and old", `{"metadata":{"name":"a"}}`, `{"metadata":{"name":"b"}}`, "a", true, ""},
		{"old only (DELETE)", "", `{"metadata":{"name":"b"}}`, "", true, ""},
		{"null object", `null`, "", "", false, ""},
		{"not JSON", `{"metadata":`, "", "", false, "cannot read object: "},
		{"not an object", `[1]`, "", "", false, "cannot read object: want a JSON object, got array"},
		{"spec not an object", `{"spec":"oops"}`, "", "", false, `spec must be an object, got "oops"`},
		{"old label not a string", `{}`, `{"metadata":{"labels":{"n":1}}}`, "", false, "oldObject: cannot read object: metadata.labels.n must be a string, got number"},
	}
	bytesOf := func(s string) []byte {
		if s == "" {
			return nil
		}
		return []byte(s)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Request
			r.SetObjects(bytesOf(tt.obj), bytesOf(tt.old))
			obj, old, err := r.Meta()
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantName != "" && (obj == nil || obj.Name != tt.wantName) {
				t.Errorf("object metadata %+v, want name %q", obj, tt.wantName)
			}
			if (old != nil) != tt.wantOld {
				t.Errorf("old metadata %+v, want present=%v", old, tt.wantOld)
			}
		})
	}
}

// SetObjects makes Meta read the new bytes, whatever was read before:
// a decoded review's metadata included.
func TestSetObjectRereads(t *testing.T) {
	r, err := Decode([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":{"metadata":{"name":"a"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req := &r.Request
	if m, _, _ := req.Meta(); m.Name != "a" {
		t.Fatalf("decoded name %q", m.Name)
	}
	req.SetObject([]byte(`{"metadata":{"name":"b","labels":{"k":"v"}}}`))
	m, _, err := req.Meta()
	if err != nil || m.Name != "b" || !reflect.DeepEqual(m.Labels, map[string]string{"k": "v"}) {
		t.Fatalf("after SetObject: %+v, %v", m, err)
	}
}
