package cel

import (
	"os"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/admission"
)

// TestJSONStats: the scan of an object's JSON bounds the sizes of the
// object it decodes to (walked as the Go maps are), metadata apart.
func TestJSONStats(t *testing.T) {
	body, err := os.ReadFile("../admission/testdata/review-pod-create.json")
	if err != nil {
		t.Fatal(err)
	}
	review, err := admission.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	for name, js := range map[string]string{
		"captured Pod":     string(review.Request.Object()),
		"escaped metadata": `{"meta\u0064ata":{"annotations":{"a":"0123456789012345678901234567890123456789"}},"spec":{"x":["a","b","c"]}}`,
		"escapes":          `{"metadata":{"n":"\"\\\u00e9"},"spec":{"s":"\ud83d\ude00\ud83d\ude00","l":[[],[1,2,3,4,5,6],{}]}}`,
		"empty":            `{}`,
	} {
		u, err := ObjectFromJSON([]byte(js))
		if err != nil {
			t.Fatal(name, err)
		}
		want, got := objectStats(u.Object), jsonStats([]byte(js))
		if got.l < want.l || got.tm < want.tm || got.tr < want.tr {
			t.Errorf("%s: the scan gives %+v, below the object's %+v", name, got, want)
		}
		t.Logf("%s: scan %+v, walk %+v", name, got, want)
	}
}

// BenchmarkJSONStats is the per-review scan of the captured Pod's sizes.
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
		jsonStats(obj)
	}
}
