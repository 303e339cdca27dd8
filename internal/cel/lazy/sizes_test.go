package lazy

import (
	"bytes"
	"os"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/cel/bound"
	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// TestDocumentSizes: the sizes Check reads of an object's JSON (with its
// index, one pass) bound the sizes of the object it decodes to, walked as
// the Go maps are (bound.ObjectStats), metadata apart; and equal them where
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
func checkSizes(t *testing.T, js []byte) (want, got bound.Stats) {
	t.Helper()
	u, err := ObjectFromJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDocument(js, jsonscan.Indexed{})
	if err != nil {
		t.Fatal(err)
	}
	want, got = bound.ObjectStats(u.Object), bound.StatsOf(d.Sizes)
	if got.L < want.L || got.TM < want.TM || got.TR < want.TR {
		t.Fatalf("%.80q: the scan gives %+v, below the object's %+v", js, got, want)
	}
	return want, got
}

// BenchmarkJSONStats is the per-review pass over the captured Pod that
// reads its index and sizes (newDocument, as Input.Check).
func BenchmarkJSONStats(b *testing.B) {
	body, err := os.ReadFile("../../admission/testdata/review-pod-create.json")
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
		if _, err := NewDocument(obj, jsonscan.Indexed{}); err != nil {
			b.Fatal(err)
		}
	}
}
