package kyverno

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/runtime/schema"

	refs "github.com/tollgate-dev/tollgate/internal/references"
)

func TestKyvernoResourceCalls(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		namespaced bool
		calls      []Call
		problem    string
	}{
		{name: "get", expr: "resource.Get('v1', 'configmaps', 'default', 'x').data", calls: []Call{{"v1", "configmaps"}}},
		{name: "list twice, camel case", expr: "resource.list('apps/v1', 'deployments', '').items.size() + resource.List('apps/v1', 'deployments', 'a', {'x': 'y'}).items.size()",
			calls: []Call{{"apps/v1", "deployments"}}},
		{name: "two resources", expr: "resource.Get('v1', 'namespaces', '', request.namespace) != null && resource.List('networking.k8s.io/v1', 'ingresses', '').items.size() > 0",
			calls: []Call{{"v1", "namespaces"}, {"networking.k8s.io/v1", "ingresses"}}},
		{name: "namespaced", expr: "resource.Get('v1', 'configmaps', 'x')", namespaced: true, calls: []Call{{"v1", "configmaps"}}},
		{name: "a comprehension's resource", expr: "object.rules.exists(resource, resource == 'nodes/proxy')"},
		{name: "the library beside a comprehension's resource", expr: "object.rules.exists(resource, resource == 'x') || resource.List('v1', 'pods', '').items.size() > 0",
			calls: []Call{{"v1", "pods"}}},
		{name: "no call", expr: "object.metadata.name == 'resource'"},
		{name: "post", expr: "resource.Post('v1', 'configmaps', 'x', {})", problem: "calls resource.Post, which creates objects"},
		{name: "to GVR", expr: "resource.ToGVR('v1', 'ConfigMap')", problem: "calls resource.ToGVR, of Kyverno's CEL libraries"},
		{name: "cluster arity", expr: "resource.Get('v1', 'configmaps', 'x')", problem: "resource.Get with 3 arguments: tollgate reads Get(apiVersion, resource, namespace, name)"},
		{name: "namespaced arity", expr: "resource.List('v1', 'configmaps', 'a', {}, 1)", namespaced: true, problem: "resource.List with 5 arguments"},
		{name: "not literal", expr: "resource.List(object.apiVersion, 'configmaps', '')", problem: "must be string literals"},
		{name: "passed on", expr: "[resource].size() > 0", problem: "resource is read only as the receiver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, problems := ResourceCalls(tc.expr, tc.namespaced)
			if !slices.Equal(calls, tc.calls) {
				t.Errorf("calls %v, want %v", calls, tc.calls)
			}
			switch {
			case tc.problem == "" && len(problems) > 0:
				t.Errorf("problems %q, want none", problems)
			case tc.problem != "" && !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.problem) }):
				t.Errorf("problems %q, want %q", problems, tc.problem)
			}
		})
	}
}

// TestKyvernoListErrors are resource.List's errors in Kyverno's words: a
// cluster-scoped resource listed in a namespace is what the apiserver
// answers Kyverno's dynamic client (test/e2e/kyvernodiff compares them).
func TestKyvernoListErrors(t *testing.T) {
	pcs := Resource{Call: Call{APIVersion: "scheduling.k8s.io/v1", Resource: "priorityclasses"},
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
			k := &library{res: &Resources{Resources: []Resource{pcs}}, store: tc.store}
			got := k.list(append([]ref.Val{req}, tc.args...)...)
			if err, ok := got.(*types.Err); !ok || err.Error() != tc.want {
				t.Errorf("got %v, want the error %q", got, tc.want)
			}
		})
	}
}
