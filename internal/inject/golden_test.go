package inject

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	jsonpatch5 "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

var update = flag.Bool("update", false, "rewrite the .injected golden files")

// Golden cases: testdata/<case>.yaml is a Pod, <case>.yaml.injected the Pod
// after its patch is applied by an independent JSON Patch implementation.
var goldenCases = []struct {
	name     string
	applied  []string
	warnings []string
	optedOut []string
}{
	{name: "basic", applied: []string{"nginx-sidecar", "setup"}},
	{name: "existing-items", applied: []string{"nginx-sidecar", "setup"}},
	{name: "empty-collections", applied: []string{"nginx-sidecar", "setup"}},
	{name: "unknown-fields", applied: []string{"nginx-sidecar", "setup"}},
	{name: "already-injected"},
	{name: "opted-out", optedOut: []string{"nginx-sidecar", "setup"}},
	{name: "name-clash", applied: []string{"setup"}, warnings: []string{
		`tollgate: policy nginx-sidecar not injected: the pod already has container "sidecar-nginx" with different content`,
	}},
	{name: "present-with-defaults"},
}

func TestGolden(t *testing.T) {
	set, err := policy.LoadPath("testdata/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join("testdata", tc.name+".yaml")
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
			golden := src + ".injected"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("patched pod differs from %s\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
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

func applyPatch(t testing.TB, doc []byte, p any) []byte {
	t.Helper()
	ops, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(ops)) == "null" {
		return doc
	}
	patch, err := jsonpatch5.DecodePatch(ops)
	if err != nil {
		t.Fatalf("patch does not decode: %v\n%s", err, ops)
	}
	out, err := patch.Apply(doc)
	if err != nil {
		t.Fatalf("patch does not apply: %v\n%s", err, ops)
	}
	return out
}
