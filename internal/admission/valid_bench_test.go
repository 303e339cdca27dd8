package admission

import (
	"os"
	"testing"

	"github.com/valyala/fastjson"
)

func BenchmarkValidJSON(b *testing.B) {
	body, _ := os.ReadFile("testdata/review-pod-create.json")
	b.Run("fastjson.Validate", func(b *testing.B) {
		for b.Loop() {
			_ = fastjson.ValidateBytes(body)
		}
	})
	b.Run("hasControl", func(b *testing.B) {
		for b.Loop() {
			_ = hasControl(body)
		}
	})
	b.Run("controlInString", func(b *testing.B) {
		for b.Loop() {
			_ = controlInString(body)
		}
	})
}
