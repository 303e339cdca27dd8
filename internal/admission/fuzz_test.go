package admission

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/valyala/fastjson"
)

// FuzzDecode: whatever the body, Decode returns a review or an error and
// never panics; a decoded review is answered with its own uid.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"create", "update", "delete"} {
		body, err := os.ReadFile("testdata/review-pod-" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","object":{"spec":"s"}}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x","object":[[[[]]]]}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","obj\u0065ct":{"a":"}"} , "object":{"b":1},"oldObject" : 12 }}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Decode(body)
		if err != nil {
			return
		}
		out, err := Encode(r.APIVersion, r.Request.UID, Allowed())
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Response struct {
				UID string `json:"uid"`
			} `json:"response"`
		}
		if err := json.Unmarshal(out, &back); err != nil || back.Response.UID != r.Request.UID {
			t.Fatalf("answer %s does not carry uid %q (%v)", out, r.Request.UID, err)
		}
		// The objects, sliced from the body, are the values the parse read.
		parsed := fastjson.MustParseBytes(body).Get("request")
		for key, raw := range map[string][]byte{"object": r.Request.Object, "oldObject": r.Request.OldObject} {
			if !json.Valid(raw) && raw != nil {
				t.Fatalf("%s is invalid JSON: %s", key, raw)
			}
			want := parsed.Get(key)
			if want == nil || want.Type() == fastjson.TypeNull {
				if raw != nil {
					t.Fatalf("%s: got %s for an absent or null member", key, raw)
				}
				continue
			}
			if !sameJSON(raw, want.MarshalTo(nil)) {
				t.Fatalf("%s: sliced %s, parsed %s", key, raw, want.MarshalTo(nil))
			}
		}
	})
}

// sameJSON compares two JSON texts as values.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
