package report

import (
	"fmt"
	"io"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/offline"
)

// Patches writes, for each mutated manifest, a unified diff of its YAML.
func Patches(w io.Writer, findings []offline.Finding) error {
	for _, f := range findings {
		if f.Patched == nil {
			continue
		}
		// The object as mutation first saw it, defaulted, so that the diff is
		// what the policies changed.
		start := f.Defaulted
		if start == nil {
			start = f.Object.JSON
		}
		before, err := yaml.JSONToYAML(start)
		if err != nil {
			return err
		}
		after, err := yaml.JSONToYAML(f.Patched)
		if err != nil {
			return err
		}
		diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A:        difflib.SplitLines(string(before)),
			B:        difflib.SplitLines(string(after)),
			FromFile: f.Object.Where() + " " + f.Object.String(),
			ToFile:   "mutated",
			Context:  3,
		})
		if err != nil {
			return err
		}
		if _, err := fmt.Fprint(w, diff); err != nil {
			return err
		}
	}
	return nil
}
