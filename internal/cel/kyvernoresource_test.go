package cel

import (
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/runtime/schema"

	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// TestKyvernoListErrors are resource.List's errors in Kyverno's words: a
// cluster-scoped resource listed in a namespace is what the apiserver
// answers Kyverno's dynamic client (test/e2e/kyvernodiff compares them).
func TestKyvernoListErrors(t *testing.T) {
	pcs := KyvernoResource{KyvernoCall: KyvernoCall{APIVersion: "scheduling.k8s.io/v1", Resource: "priorityclasses"},
		Decl: &refs.Compiled{GVK: schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}}}
	req := types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{"operation": "CREATE"})
	for _, tc := range []struct {
		name  string
		store *refs.Store
		args  []ref.Val
		want  string
	}{
		{"cluster-scoped in a namespace", &refs.Store{}, []ref.Val{types.String("scheduling.k8s.io/v1"), types.String("priorityclasses"), types.String("ns")},
			"failed to list resource: the server could not find the requested resource"},
		{"not declared", &refs.Store{}, []ref.Val{types.String("v1"), types.String("configmaps"), types.String("ns")},
			"failed to list resource: v1 configmaps was not declared when the policy loaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &kyvernoStore{res: &KyvernoResources{Resources: []KyvernoResource{pcs}}, store: tc.store}
			got := k.list(append([]ref.Val{req}, tc.args...)...)
			if err, ok := got.(*types.Err); !ok || err.Error() != tc.want {
				t.Errorf("got %v, want the error %q", got, tc.want)
			}
		})
	}
}
