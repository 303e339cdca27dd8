package engine

import (
	"context"
	"os"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// BenchmarkLibraryPod evaluates the captured Pod review against the library
// group of 12 CEL policies about Pods.
func BenchmarkLibraryPod(b *testing.B) {
	set, err := policy.LoadPath("../../policies")
	if err != nil {
		b.Fatal(err)
	}
	var g *policy.Group
	for _, gr := range set.Groups {
		if g == nil || len(gr.Policies) > len(g.Policies) {
			g = gr
		}
	}
	body, err := os.ReadFile("../admission/testdata/review-pod-create.json")
	if err != nil {
		b.Fatal(err)
	}
	review, err := admission.Decode(body)
	if err != nil {
		b.Fatal(err)
	}
	e := New(set, Options{})
	b.ReportMetric(float64(len(g.Policies)), "policies")
	for b.Loop() {
		e.Review(context.Background(), g, &review.Request)
	}
}
