package cel

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// TestDocumentSizes: the sizes Check reads of an object's JSON (with its
// index, one pass) bound the sizes of the object it decodes to, walked as
// the Go maps are (objectStats), metadata apart; and equal them where
// nothing is escaped or repeated (bytes are code points, entries members).
func TestDocumentSizes(t *testing.T) {
	docs := lazyDocs(t)
	for name, js := range map[string]string{
		"escaped metadata":   `{"meta\u0064ata":{"annotations":{"a":"0123456789012345678901234567890123456789"}},"spec":{"x":["a","b","c"]}}`,
		"escapes":            `{"metadata":{"n":"\"\\\u00e9"},"spec":{"s":"\ud83d\ude00\ud83d\ude00","l":[[],[1,2,3,4,5,6],{}]}}`,
		"empty":              `{}`,
		"long key":           `{"spec":{"a-key-longer-than-every-string-in-this-document":"v"},"metadata":{"name":"n"}}`,
		"long metadata key":  `{"metadata":{"labels":{"a-label-key-longer-than-every-other-string":"v"}},"spec":"s"}`,
		"long top-level key": `{"a-top-level-key-longer-than-every-other-string":{"metadata":"m"}}`,
		"numbers":            `{"spec":{"l":[1,2.5,-3,4e2,true,false,null]},"metadata":{}}`,
		"metadata string":    `{"metadata":"a-metadata-string-longer-than-the-others","spec":{"a":"b"}}`,
		"nested metadata":    `{"spec":{"metadata":{"name":"a-nested-metadata-name-longer-than-all"}},"metadata":{"name":"n"}}`,
		"members":            `{"metadata":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8},"spec":{"a":[]}}`,
	} {
		docs[name] = []byte(js)
	}
	for name, js := range docs {
		want, got := checkSizes(t, js)
		plain := !bytes.Contains(js, []byte(`\`)) && name != "duplicates.json"
		if plain && got != want {
			t.Errorf("%s: the scan gives %+v, the object %+v", name, got, want)
		}
		t.Logf("%s: scan %+v, walk %+v", name, got, want)
	}
}

// checkSizes requires the sizes read with js's index to bound those of
// the object it decodes to, and returns both.
func checkSizes(t *testing.T, js []byte) (want, got stats) {
	t.Helper()
	u, err := ObjectFromJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDocument(js, jsonscan.Indexed{})
	if err != nil {
		t.Fatal(err)
	}
	want, got = objectStats(u.Object), d.sizes
	if got.l < want.l || got.tm < want.tm || got.tr < want.tr {
		t.Fatalf("%.80q: the scan gives %+v, below the object's %+v", js, got, want)
	}
	return want, got
}

// BenchmarkJSONStats is the per-review pass over the captured Pod that
// reads its index and sizes (newDocument, as Input.Check).
func BenchmarkJSONStats(b *testing.B) {
	body, err := os.ReadFile("../admission/testdata/review-pod-create.json")
	if err != nil {
		b.Fatal(err)
	}
	review, err := admission.Decode(body)
	if err != nil {
		b.Fatal(err)
	}
	obj := review.Request.Object()
	b.SetBytes(int64(len(obj)))
	for b.Loop() {
		if _, err := newDocument(obj, jsonscan.Indexed{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReviewSizes: an input whose objects are slices of a decoded review
// (admission.Decode: the review validated, indexed and sized in one pass)
// has the sizes of one whose objects are read on their own, on the
// documents of TestDocumentSizes as a CREATE's object and as an UPDATE's
// objects, and on the captured reviews.
func TestReviewSizes(t *testing.T) {
	docs := lazyDocs(t)
	var names []string
	for name := range docs {
		names = append(names, name)
	}
	slices.Sort(names)
	var bodies [][]byte
	for i, name := range names {
		obj, old := docs[name], docs[names[(i+1)%len(names)]]
		for _, pair := range [][2][]byte{{obj, nil}, {obj, old}} {
			o := "null"
			if pair[1] != nil {
				o = string(pair[1])
			}
			bodies = append(bodies, []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"version":"v1","kind":"Pod"},"resource":{"version":"v1","resource":"pods"},"operation":"UPDATE","object":`+string(pair[0])+`,"oldObject":`+o+`}}`))
		}
	}
	files, _ := filepath.Glob("../admission/testdata/review-*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	indexed := 0
	for _, body := range bodies {
		review, err := admission.Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		req := &review.Request
		fromReview := &Input{ObjectJSON: req.Object(), OldObjectJSON: req.OldObject(), Indexed: req.Indexed()}
		alone := &Input{ObjectJSON: bytes.Clone(req.Object()), OldObjectJSON: bytes.Clone(req.OldObject())}
		got, gotOK := inputStats(fromReview)
		want, wantOK := inputStats(alone)
		if got != want || gotOK != wantOK {
			t.Errorf("%.120s: sizes from the review %+v (%v), read alone %+v (%v)", body, got, gotOK, want, wantOK)
		}
		if fromReview.docs[0] != nil && &fromReview.docs[0].raw[0] == &body[0] {
			indexed++
		}
	}
	if indexed == 0 {
		t.Fatal("no input read its object from the review's index")
	}
	t.Logf("%d reviews, %d read with the review's index", len(bodies), indexed)
}
