package offline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/references"
)

// TestReferenceProjectionKeepsDecisions checks the library's reference
// policies on their suite's resources and internal/cli's, every object
// also a referenced one, twice: with the store keeping only what the
// policies read (analysis.ReferenceReads) and keeping whole objects. Every
// result and message must be the same.
func TestReferenceProjectionKeepsDecisions(t *testing.T) {
	objs, err := manifest.Read([]string{"../../policies/tests/references-resources.yaml", "../cli/testdata/references/shop.yaml", "../cli/testdata/references/docs.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(whole bool) []string {
		set, err := policy.LoadPath("../../policies/references")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range set.References() {
			if whole {
				c.SetRead(references.Read{Whole: true})
			} else if c.Keeps() == "*" {
				t.Errorf("%s: the store keeps whole objects; the analysis should find what the library's policies read", c.Name)
			}
		}
		ext, err := ExternalFor(context.Background(), set, Input{Manifests: objs})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range Run(context.Background(), engine.New(set, engine.Options{External: ext}), objs, Options{}) {
			if f.Err != nil {
				t.Fatalf("%s: %v", f.Object.Where(), f.Err)
			}
			for _, r := range f.Results {
				out = append(out, fmt.Sprintf("%s %s: %s %s", f.Object.Where(), r.Policy, r.Outcome, r.Message))
			}
		}
		return out
	}
	projected, whole := run(false), run(true)
	if !slices.Equal(projected, whole) {
		for i := range max(len(projected), len(whole)) {
			var p, w string
			if i < len(projected) {
				p = projected[i]
			}
			if i < len(whole) {
				w = whole[i]
			}
			if p != w {
				t.Errorf("projected %q\nwhole     %q", p, w)
			}
		}
	}
	fails := 0
	for _, r := range whole {
		if strings.Contains(r, ": fail ") {
			fails++
		}
	}
	t.Logf("%d results (%d fail) the same with projected and whole objects", len(whole), fails)
	if len(whole) < 30 || fails < 10 {
		t.Errorf("only %d results, %d failing: the inputs do not exercise the policies", len(whole), fails)
	}
}
