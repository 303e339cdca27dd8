package backgroundaudit

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/internal/audit"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/engine/enginetest"
)

// TestReportedApplies builds the results of stored ConfigMaps as the
// auditor does (audit.Evaluate, then reported) with policies that apply
// only to some: a policy that does not apply (no binding, a binding's
// namespace or object selector, match conditions false, a system
// namespace) leaves no result, never a pass; an object no policy applies
// to leaves no report entry.
func TestReportedApplies(t *testing.T) {
	eng := enginetest.Applies(t)
	set := eng.Set()
	depends := audit.Dependences(set)
	cm := audit.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Kind: "ConfigMap", Namespaced: true}
	stored := func(ns string, labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"password": "hunter2"}}}
		u.SetName("settings")
		u.SetNamespace(ns)
		u.SetUID("u-1")
		u.SetLabels(labels)
		return u
	}
	canary := map[string]string{"track": "canary"}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want map[string]engine.Outcome // the results kept, by policy
	}{
		{"binding selects the namespace", stored("team-a", nil),
			map[string]engine.Outcome{"vap": engine.Fail, "validate-team-a": engine.Fail}},
		{"binding namespace and object selector not selecting", stored("team-b", nil), nil},
		{"binding selects the object's labels", stored("team-b", canary),
			map[string]engine.Outcome{"vap": engine.Fail, "validate-canary": engine.Fail}},
		{"match conditions false", stored("team-a", map[string]string{"track": "canary", "exempt": "yes"}),
			map[string]engine.Outcome{"validate-canary": engine.Fail}},
		{"system namespace", stored("kube-system", canary), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, keep := reported(audit.Evaluate(context.Background(), eng, cm, tt.obj, depends))
			got := map[string]engine.Outcome{}
			for _, r := range f.Results {
				got[r.Policy] = r.Outcome
				if r.Policy == "vap-unbound" || r.Outcome == engine.Pass {
					t.Errorf("result of a policy that does not apply: %+v", r)
				}
			}
			if keep != (len(tt.want) > 0) || !maps.Equal(got, tt.want) {
				keys := slices.Sorted(maps.Keys(got))
				t.Errorf("kept %v (%s), keep=%v; want %v", got, strings.Join(keys, ","), keep, tt.want)
			}
		})
	}
}
