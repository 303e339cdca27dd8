package cel

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/admission"
)

// reviewDocs are the objects TestReviewSizes puts in reviews: package
// lazy's edge cases (lazy/testdata) and the captured Pods'.
func reviewDocs(t *testing.T) map[string][]byte {
	t.Helper()
	docs := map[string][]byte{}
	files, _ := filepath.Glob("lazy/testdata/*.json")
	files = append(files, "../admission/testdata/review-pod-create.json", "../admission/testdata/review-pod-update.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(f) == "lazy/testdata" {
			docs[filepath.Base(f)] = data
			continue
		}
		review, err := admission.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)+" object"] = review.Request.Object()
		if old := review.Request.OldObject(); old != nil {
			docs[filepath.Base(f)+" oldObject"] = old
		}
	}
	if len(docs) < 8 {
		t.Fatalf("only %d documents", len(docs))
	}
	return docs
}

// TestReviewSizes: an input whose objects are slices of a decoded review
// (admission.Decode: the review validated, indexed and sized in one pass)
// has the sizes of one whose objects are read on their own, on the
// documents of TestDocumentSizes as a CREATE's object and as an UPDATE's
// objects, and on the captured reviews.
func TestReviewSizes(t *testing.T) {
	docs := reviewDocs(t)
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
		if fromReview.docs[0] != nil && &fromReview.docs[0].Indexed().JSON()[0] == &body[0] {
			indexed++
		}
	}
	if indexed == 0 {
		t.Fatal("no input read its object from the review's index")
	}
	t.Logf("%d reviews, %d read with the review's index", len(bodies), indexed)
}
