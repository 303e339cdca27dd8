package inject

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// FuzzInject: for any Pod tollgate accepts, the patch applies cleanly to it,
// the result holds each injected item exactly once and every original field,
// and a second injection changes nothing. The Pod read from its parts,
// scanned (the one found last open) or found with the index as
// admission.Decode finds them, is the Pod read from the whole.
func FuzzInject(f *testing.F) {
	cases, _ := filepath.Glob(filepath.Join(goldenDir, "*.yaml"))
	for _, c := range cases {
		f.Add(readJSONFile(f, c))
	}
	f.Add([]byte(`{"metadata":{"annotations":null},"spec":{"containers":[],"volumes":null}}`))
	set, err := policy.LoadPath("testdata/policies.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		pod, err := PodFromJSON(doc)
		if err != nil {
			return
		}
		parts := jsonscan.OpenMembers(doc, "metadata", "spec")
		if fromParts, err := PodFromParts(jsonscan.Indexed{}, parts[0], parts[1]); err != nil || !reflect.DeepEqual(fromParts, pod) {
			t.Fatalf("from the parts: %+v, %v; from the whole: %+v", fromParts, err, pod)
		}
		indexed, err := jsonscan.ValidIndexed(doc, nil)
		if err != nil {
			t.Fatal(err)
		}
		at := indexed.Members(indexed.Root(), "metadata", "spec")
		if fromIndex, err := PodFromParts(indexed, indexed.Bytes(at[0]), indexed.Bytes(at[1])); err != nil || !reflect.DeepEqual(fromIndex, pod) {
			t.Fatalf("from the indexed parts: %+v, %v; from the whole: %+v", fromIndex, err, pod)
		}
		res := Inject(Params{Pod: pod, Policies: set.Policies})
		patched := applyPatch(t, doc, res.Patch)
		assertKeepsOriginal(t, doc, patched)
		again, err := PodFromJSON(patched)
		if err != nil {
			t.Fatalf("the patched pod does not read back: %v", err)
		}
		for l, items := range [4][]Named{again.InitContainers, again.Containers, again.Volumes, again.ImagePullSecrets} {
			seen := map[string]int{}
			for _, it := range items {
				seen[it.Name]++
			}
			for _, p := range set.Policies {
				in := p.Injection()
				for _, want := range [4][]policy.Item{in.InitContainers, in.Containers, in.Volumes, in.ImagePullSecrets}[l] {
					if seen[want.Name] > 1 {
						t.Fatalf("%s %q appears %d times", singular[l], want.Name, seen[want.Name])
					}
				}
			}
		}
		if second := Inject(Params{Pod: again, Policies: set.Policies}); len(second.Patch) != 0 {
			ops, _ := json.Marshal(second.Patch)
			t.Fatalf("a second injection patched: %s", ops)
		}
	})
}

func readJSONFile(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	js, err := yamlToJSON(data)
	if err != nil {
		tb.Fatal(err)
	}
	return js
}
