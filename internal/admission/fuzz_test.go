package admission

import (
	"encoding/json"
	"os"
	"testing"
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
		if len(r.Request.Object) > 0 && !json.Valid(r.Request.Object) {
			t.Fatalf("object re-encoded as invalid JSON: %s", r.Request.Object)
		}
	})
}
