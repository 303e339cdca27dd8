package engine

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// capturedPod is the Pod CREATE review captured from kube-apiserver.
func capturedPod(tb testing.TB) *admission.Request {
	tb.Helper()
	body, err := os.ReadFile("../admission/testdata/review-pod-create.json")
	if err != nil {
		tb.Fatal(err)
	}
	review, err := admission.Decode(body)
	if err != nil {
		tb.Fatal(err)
	}
	return &review.Request
}

// benchGroup reviews the captured Pod against the set's one group.
func benchGroup(b *testing.B, set *policy.Set, err error) {
	if err != nil {
		b.Fatal(err)
	}
	req := capturedPod(b)
	g := set.Groups[0]
	e := New(set, Options{})
	b.ReportMetric(float64(len(g.Policies)), "policies")
	for b.Loop() {
		e.Review(context.Background(), g, req)
	}
}

// BenchmarkLibraryPod evaluates the captured Pod review against the
// library's Pod group: the Pod Security restricted set and the rest of the
// library's Pod policies (benchpolicies.LibraryPods).
func BenchmarkLibraryPod(b *testing.B) {
	set, err := benchpolicies.LibraryPods("../..")
	benchGroup(b, set, err)
}

// BenchmarkTwenty is make bench's 20-policy group on the captured Pod.
func BenchmarkTwenty(b *testing.B) {
	set, err := benchpolicies.Twenty("../..")
	benchGroup(b, set, err)
}

// BenchmarkPolicies is the cost of each additional simple CEL policy: 1,
// 10, 50 and 200 field checks on one path, on the captured Pod.
func BenchmarkPolicies(b *testing.B) {
	for _, n := range []int{1, 10, 50, 200} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			set, err := benchpolicies.FieldChecks(n)
			benchGroup(b, set, err)
		})
	}
}
