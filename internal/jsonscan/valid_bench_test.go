package jsonscan

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/valyala/fastjson"
)

// BenchmarkValid compares the validators on the captured review: valid,
// which Valid uses, encoding/json's, which it answers as, and fastjson's,
// which is not strict enough (raw control characters in strings); and
// ValidIndexed, valid indexing in the same pass, with and without the
// sizing admission.Decode asks for.
func BenchmarkValid(b *testing.B) {
	body, err := os.ReadFile("../admission/testdata/review-pod-create.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.Run("jsonscan.valid", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !valid(body) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("jsonscan.ValidIndexed", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := ValidIndexed(body, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	sizing := &Sizing{Paths: [][]string{{"request", "object"}, {"request", "oldObject"}}, Apart: "metadata"}
	b.Run("jsonscan.ValidIndexed.sized", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := ValidIndexed(body, sizing); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !json.Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("fastjson.ValidateBytes", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if fastjson.ValidateBytes(body) != nil {
				b.Fatal("invalid")
			}
		}
	})
}
