package cel

import (
	"slices"
	"strings"
	"testing"
)

func TestKyvernoResourceCalls(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		namespaced bool
		calls      []KyvernoCall
		problem    string
	}{
		{name: "get", expr: "resource.Get('v1', 'configmaps', 'default', 'x').data", calls: []KyvernoCall{{"v1", "configmaps"}}},
		{name: "list twice, camel case", expr: "resource.list('apps/v1', 'deployments', '').items.size() + resource.List('apps/v1', 'deployments', 'a', {'x': 'y'}).items.size()",
			calls: []KyvernoCall{{"apps/v1", "deployments"}}},
		{name: "two resources", expr: "resource.Get('v1', 'namespaces', '', request.namespace) != null && resource.List('networking.k8s.io/v1', 'ingresses', '').items.size() > 0",
			calls: []KyvernoCall{{"v1", "namespaces"}, {"networking.k8s.io/v1", "ingresses"}}},
		{name: "namespaced", expr: "resource.Get('v1', 'configmaps', 'x')", namespaced: true, calls: []KyvernoCall{{"v1", "configmaps"}}},
		{name: "a comprehension's resource", expr: "object.rules.exists(resource, resource == 'nodes/proxy')"},
		{name: "the library beside a comprehension's resource", expr: "object.rules.exists(resource, resource == 'x') || resource.List('v1', 'pods', '').items.size() > 0",
			calls: []KyvernoCall{{"v1", "pods"}}},
		{name: "no call", expr: "object.metadata.name == 'resource'"},
		{name: "post", expr: "resource.Post('v1', 'configmaps', 'x', {})", problem: "calls resource.Post, which creates objects"},
		{name: "to GVR", expr: "resource.ToGVR('v1', 'ConfigMap')", problem: "calls resource.ToGVR, of Kyverno's CEL libraries"},
		{name: "cluster arity", expr: "resource.Get('v1', 'configmaps', 'x')", problem: "resource.Get with 3 arguments: tollgate reads Get(apiVersion, resource, namespace, name)"},
		{name: "namespaced arity", expr: "resource.List('v1', 'configmaps', 'a', {}, 1)", namespaced: true, problem: "resource.List with 5 arguments"},
		{name: "not literal", expr: "resource.List(object.apiVersion, 'configmaps', '')", problem: "must be string literals"},
		{name: "passed on", expr: "[resource].size() > 0", problem: "resource is read only as the receiver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, problems := KyvernoResourceCalls(tc.expr, tc.namespaced)
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
