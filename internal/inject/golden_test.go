package inject

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/golden"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Golden cases are found, not listed: every testdata/golden/<case>.yaml is
// a Pod, <case>.yaml.injected the Pod after its patch is applied by an
// independent JSON Patch implementation. The input's leading comments say
// what injection must report:
//
//	# want applied: POLICY...
//	# want opted-out: POLICY...
//	# want warning: TEXT        (one line per warning)
//	# want nothing applied, opted out or warned
//
// A golden file without its input fails the test (as Istio's injector tests
// do), so that a renamed or removed case leaves nothing stale behind.
const goldenDir = "testdata/golden"

type goldenCase struct {
	name     string
	applied  []string
	warnings []string
	optedOut []string
}

func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join(goldenDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatalf("no cases in %s", goldenDir)
	}
	var cases []goldenCase
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		c := goldenCase{name: strings.TrimSuffix(filepath.Base(in), ".yaml")}
		for _, l := range strings.Split(string(data), "\n") {
			want, ok := strings.CutPrefix(l, "# want ")
			if !ok {
				continue
			}
			switch key, value, _ := strings.Cut(want, ": "); key {
			case "applied":
				c.applied = strings.Fields(value)
			case "opted-out":
				c.optedOut = strings.Fields(value)
			case "warning":
				c.warnings = append(c.warnings, value)
			default:
				if want != "nothing applied, opted out or warned" {
					t.Fatalf("%s: unknown expectation %q", in, l)
				}
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// TestGoldenFilesUsed: every file in testdata/golden is a case's input or
// its golden output.
func TestGoldenFilesUsed(t *testing.T) {
	used := map[string]bool{}
	for _, c := range goldenCases(t) {
		used[c.name+".yaml"] = true
		used[c.name+".yaml.injected"] = true
	}
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !used[e.Name()] {
			t.Errorf("%s: no case uses it (stale golden file? its input is %s)", filepath.Join(goldenDir, e.Name()),
				strings.TrimSuffix(e.Name(), ".injected"))
		}
	}
}

func TestGolden(t *testing.T) {
	set, err := policy.LoadPath("testdata/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range goldenCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(goldenDir, tc.name+".yaml")
			input := readJSON(t, src)
			res := Inject(Params{Pod: decodePod(t, input), Policies: set.Policies})
			if !slices.Equal(res.Applied(), tc.applied) {
				t.Errorf("applied = %v, want %v", res.Applied(), tc.applied)
			}
			if !slices.Equal(res.Warnings(), tc.warnings) {
				t.Errorf("warnings = %q, want %q", res.Warnings(), tc.warnings)
			}
			if got := res.names(OptedOut); !slices.Equal(got, tc.optedOut) {
				t.Errorf("opted out of %v, want %v", got, tc.optedOut)
			}
			patched := applyPatch(t, input, res.Patch)
			got, err := yaml.JSONToYAML(patched)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, src+".injected", got)
			assertKeepsOriginal(t, input, patched)

			t.Run("idempotent", func(t *testing.T) {
				again := Inject(Params{Pod: decodePod(t, patched), Policies: set.Policies})
				if len(again.Patch) != 0 {
					ops, _ := json.Marshal(again.Patch)
					t.Errorf("second injection patched again: %s", ops)
				}
			})
		})
	}
}

// assertKeepsOriginal checks every field of the input is still in the output:
// injection only adds.
func assertKeepsOriginal(t testing.TB, input, patched []byte) {
	t.Helper()
	var in, out any
	if err := json.Unmarshal(input, &in); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(patched, &out); err != nil {
		t.Fatal(err)
	}
	// The status annotation is the one value injection may rewrite.
	if meta, ok := in.(map[string]any)["metadata"].(map[string]any); ok {
		if ann, ok := meta["annotations"].(map[string]any); ok {
			delete(ann, StatusAnnotation)
		}
	}
	if !keeps(out, in) {
		t.Errorf("the patch lost part of the original pod\ninput:   %s\npatched: %s", input, patched)
	}
}

// keeps is like covers, but lists may have grown (every element of want must
// appear in have, in order) and a null may have been filled.
func keeps(have, want any) bool {
	switch w := want.(type) {
	case nil:
		return true
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if hv, ok := h[k]; !ok || !keeps(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return false
		}
		i := 0
		for _, wv := range w {
			for i < len(h) && !keeps(h[i], wv) {
				i++
			}
			if i == len(h) {
				return false
			}
			i++
		}
		return true
	default:
		return have == want
	}
}

func yamlToJSON(data []byte) ([]byte, error) { return yaml.YAMLToJSON(data) }

func readJSON(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func decodePod(t *testing.T, js []byte) *Pod {
	t.Helper()
	pod, err := PodFromJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func applyPatch(t testing.TB, doc []byte, p jsonpatch.Patch) []byte {
	t.Helper()
	out, err := jsonpatch.Apply(doc, p)
	if err != nil {
		t.Fatalf("patch does not apply: %v\n%v", err, p)
	}
	return out
}
