package admission

import (
	"encoding/json"
	"os"
	"reflect"
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
		// Decode reads every review as the previous decoder, which parsed
		// the whole body with fastjson and re-encoded the objects, did.
		// (It refused objects nested deeper than fastjson's 300 levels,
		// which Decode hands on, up to encoding/json's 10,000 and the
		// apiserver's, two levels down; the policies decode them as the
		// apiserver does.)
		ref, err := referenceDecode(body)
		if err != nil {
			return
		}
		got, want := r.Request, ref.Request
		gotObj, gotOld := got.Object(), got.OldObject()
		wantObj, wantOld := want.Object(), want.OldObject()
		for _, o := range [][]byte{gotObj, gotOld} {
			if o != nil && !json.Valid(o) {
				t.Fatalf("an object is invalid JSON: %s", o)
			}
		}
		// The reference re-encoded a string holding both an escape and
		// invalid UTF-8 as invalid JSON (strconv's \x escapes); Decode
		// hands on the bytes as sent. Such objects are not compared.
		for _, o := range [][]byte{wantObj, wantOld} {
			if o != nil && !json.Valid(o) {
				gotObj, gotOld, wantObj, wantOld = nil, nil, nil, nil
			}
		}
		gotMeta, gotOldMeta, gotErr := got.Meta()
		wantMeta, wantOldMeta, wantErr := want.Meta()
		if r.APIVersion != ref.APIVersion || !sameJSON(gotObj, wantObj) || !sameJSON(gotOld, wantOld) ||
			(gotErr == nil) != (wantErr == nil) ||
			(gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("Decode and the reference differ:\n%+v\n%+v\nobjects %s / %s", got, want, gotObj, wantObj)
		}
		if !reflect.DeepEqual(gotMeta, wantMeta) || !reflect.DeepEqual(gotOldMeta, wantOldMeta) {
			t.Fatalf("Decode and the reference read different metadata:\n%+v %+v\n%+v %+v", gotMeta, gotOldMeta, wantMeta, wantOldMeta)
		}
		got.SetObjects(nil, nil)
		want.SetObjects(nil, nil)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode and the reference differ:\n%+v\n%+v", got, want)
		}
	})
}

// sameJSON compares two JSON texts as values; nil only equals nil.
func sameJSON(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
