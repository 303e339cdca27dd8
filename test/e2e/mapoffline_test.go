//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// TestMAPDifferentialWithoutClusterAccess is TestMAPDifferential for a
// tollgate without cluster access (no --kubeconfig, as the README runs it:
// it knows no namespace labels, and the webhook entries of the bindings do
// the selecting), with the policies that have no params (params are read
// from the cluster): bound natively to mapoff-native and through tollgate
// to mapoff-tollgate, each selected by its label mapdiff. A third namespace,
// labeled but selected by no binding, must be untouched: every object stored
// there as before the policies were in force, none refused.
func TestMAPDifferentialWithoutClusterAccess(t *testing.T) {
	ctx := context.Background()
	template := withoutParams(mapPolicies(t))
	sides := mapSides{native: "mapoff-native", tollgate: "mapoff-tollgate"}
	const unselected = "mapoff-unselected"
	ensureNamespaces(t, map[string]map[string]string{
		sides.native:   {"mapdiff": "off-native", "sidecar-injection": "enabled"},
		sides.tollgate: {"mapdiff": "offline", "sidecar-injection": "enabled"},
		unselected:     {"mapdiff": "none", "team": "a"},
	})
	corpus := mapCorpus()
	before := make([]map[string]any, len(corpus))
	for i, obj := range corpus {
		var err error
		if before[i], err = createObject(ctx, unselected, obj, true); err != nil {
			t.Fatalf("before any policy: %v", err)
		}
	}
	applyNative(t, bytes.ReplaceAll(template, []byte("PLACEHOLDER"), []byte("off-native")))
	startTollgateWithout(t, "map-offline", mapGone(sides.tollgate), bytes.ReplaceAll(template, []byte("PLACEHOLDER"), []byte("offline")))
	sides.wait(t)
	sides.compare(t, "7 policies without params (1 with two bindings)")

	refused, changed := 0, 0
	for i, obj := range corpus {
		got, err := createObject(ctx, unselected, obj, true)
		if err != nil {
			refused++
			t.Errorf("%s in %s, which no binding selects: refused: %v", before[i]["metadata"].(map[string]any)["name"], unselected, err)
			continue
		}
		if !reflect.DeepEqual(normalized(before[i]), normalized(got)) {
			changed++
			b, _ := json.Marshal(normalized(before[i]))
			g, _ := json.Marshal(normalized(got))
			t.Errorf("%s, which no binding selects: stored otherwise than before the policies\nbefore: %s\nafter:  %s", unselected, b, g)
		}
	}
	t.Logf("namespace %s, labeled, selected by no binding: %d objects, %d refused, %d stored otherwise than before the policies", unselected, len(corpus), refused, changed)
	sides.stable(t)
}

// withoutParams is a stream of policies without the documents (policies
// and bindings) that use params.
func withoutParams(docs []byte) []byte {
	var kept [][]byte
	for _, doc := range bytes.Split(docs, []byte("\n---\n")) {
		if !bytes.Contains(doc, []byte("paramKind:")) && !bytes.Contains(doc, []byte("paramRef:")) {
			kept = append(kept, doc)
		}
	}
	return bytes.Join(kept, []byte("\n---\n"))
}
