package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/mutatingpolicy"
)

func TestMAPLoads(t *testing.T) {
	var loaded []*mutatingpolicy.Policy
	for _, file := range []string{"v1.yaml", "v1beta1.yaml"} {
		set, err := LoadPath(filepath.Join("testdata", "map", file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(set.Policies) != 1 || set.Policies[0].MAP == nil || len(set.Policies[0].MAP.Bindings) != 1 {
			t.Fatalf("%s: policies %v", file, set.Names())
		}
		m := set.Policies[0].MAP
		s := m.Policy.Spec
		mc := s.MatchConstraints
		if mc.NamespaceSelector == nil || mc.ObjectSelector == nil || *mc.MatchPolicy != "Equivalent" || *mc.ResourceRules[0].Scope != "*" ||
			*s.FailurePolicy != "Fail" {
			t.Errorf("%s: the apiserver's defaults were not applied", file)
		}
		if g := set.Groups[0]; g.Path() != "/mutate/sidecar" || g.Action != ActionMutate || g.Kind != GroupMAP {
			t.Errorf("%s: group %s %s %s", file, g.Path(), g.Action, g.Kind)
		}
		loaded = append(loaded, m)
	}
	// v1beta1 converts to the same v1 policy, field for field.
	if !reflect.DeepEqual(loaded[0].Policy.Spec, loaded[1].Policy.Spec) || !reflect.DeepEqual(loaded[0].Bindings[0].Spec, loaded[1].Bindings[0].Spec) {
		t.Errorf("v1beta1 converted to\n%+v\nwant\n%+v", loaded[1].Policy.Spec, loaded[0].Policy.Spec)
	}
}

func TestMAPRejects(t *testing.T) {
	header := "apiVersion: admissionregistration.k8s.io/v1\n"
	policy := func(spec string) string {
		return header + "kind: MutatingAdmissionPolicy\nmetadata: {name: m}\nspec:\n" + spec
	}
	binding := func(spec string) string {
		return header + "kind: MutatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: " + spec + "\n"
	}
	constraints := "  matchConstraints:\n    resourceRules: [{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [pods]}]\n"
	rules := constraints + "  reinvocationPolicy: Never\n"
	mutations := "  mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: 'Object{}'}}]\n"
	apply := mutations
	tests := []struct {
		name, doc, want string
	}{
		{"param kind without kind", policy(rules + apply + "  paramKind: {apiVersion: v1}\n"), `MutatingAdmissionPolicy "m": spec.paramKind.kind: Required value`},
		{"param ref without name or selector", binding("{policyName: m, paramRef: {parameterNotFoundAction: Deny}}"), `MutatingAdmissionPolicyBinding "b": spec.paramRef: Required value: one of name or selector must be specified`},
		{"param ref without not-found action", binding("{policyName: m, paramRef: {name: p}}"), `MutatingAdmissionPolicyBinding "b": spec.paramRef.parameterNotFoundAction: Required value`},
		{"binding without policy name", binding("{}"), "spec.policyName: Required value"},
		{"no match constraints", policy(apply), "spec.matchConstraints: Required value"},
		{"no rules", policy("  matchConstraints: {}\n" + apply), "spec.matchConstraints.resourceRules: Required value"},
		{"delete", policy(strings.Replace(rules, "CREATE", "DELETE", 1) + apply), `spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE"`},
		{"no mutations", policy(rules), "spec.mutations: Required value"},
		{"no patch type", policy(rules + "  mutations: [{applyConfiguration: {expression: 'Object{}'}}]\n"), "spec.mutations[0].patchType: Required value"},
		{"bad patch type", policy(rules + "  mutations: [{patchType: Merge}]\n"), `spec.mutations[0].patchType: Unsupported value: "Merge"`},
		{"json patch missing", policy(rules + "  mutations: [{patchType: JSONPatch, applyConfiguration: {expression: 'Object{}'}}]\n"), "spec.mutations[0].jsonPatch: Required value"},
		{"both patches", policy(rules + "  mutations: [{patchType: JSONPatch, jsonPatch: {expression: '[]'}, applyConfiguration: {expression: 'Object{}'}}]\n"), `spec.mutations[0].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch`},
		{"reinvocation", policy(constraints + mutations + "  reinvocationPolicy: Always\n"), `spec.reinvocationPolicy: Unsupported value: "Always"`},
		{"no reinvocation policy", policy(constraints + mutations), "spec.reinvocationPolicy: Required value"},
		{"failure policy", policy(rules + apply + "  failurePolicy: Maybe\n"), `spec.failurePolicy: Unsupported value: "Maybe"`},
		{"duplicate condition", policy(rules + apply + "  matchConditions: [{name: a, expression: 'true'}, {name: a, expression: 'true'}]\n"), `spec.matchConditions[1].name: Duplicate value: "a"`},
		{"does not compile", policy(rules + "  mutations: [{patchType: JSONPatch, jsonPatch: {expression: 'object.spec.('}}]\n"), `spec.mutations[0].jsonPatch.expression: Invalid value: "object.spec.("`},
		{"wrong return type", policy(rules + "  mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: '1'}}]\n"), "spec.mutations[0].applyConfiguration.expression: Invalid value"},
		{"bad variable", policy(rules + apply + "  variables: [{name: v, expression: 'object.('}]\n"), "spec.variables[0].expression: Invalid value"},
		{"bad condition", policy(rules + apply + "  matchConditions: [{name: c, expression: '1'}]\n"), "spec.matchConditions[0].expression: Invalid value"},
		{"unknown field", policy(rules + apply + "  mutationz: []\n"), `unknown field "spec.mutationz"`},
		{"v1alpha1", strings.Replace(policy(rules+apply), "/v1\n", "/v1alpha1\n", 1), `MutatingAdmissionPolicy "m": apiVersion: Unsupported value: "admissionregistration.k8s.io/v1alpha1"`},
		{"v1beta1 unknown field", strings.Replace(policy(rules+apply+"  mutationz: []\n"), "/v1\n", "/v1beta1\n", 1), `unknown field "spec.mutationz"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("m.yaml", []byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant %q", err, tt.want)
			}
		})
	}
	ps, err := Parse("m.yaml", []byte(policy(rules+apply)+"---\n"+binding("{policyName: m}")+"---\n"+binding("{policyName: m}")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSet(ps); err == nil || !strings.Contains(err.Error(), `duplicate MutatingAdmissionPolicyBinding name "b"`) {
		t.Errorf("duplicate binding: %v", err)
	}
	ps, err = Parse("m.yaml", []byte(binding("{policyName: missing}")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSet(ps); err == nil || !strings.Contains(err.Error(), `MutatingAdmissionPolicyBinding "b": spec.policyName: MutatingAdmissionPolicy "missing" is not loaded`) {
		t.Errorf("dangling binding: %v", err)
	}
}

// TestMAPGroupsFirst: MutatingAdmissionPolicies' webhooks come before
// tollgate's own mutations, as the apiserver runs its policies before
// every webhook.
func TestMAPGroupsFirst(t *testing.T) {
	defaults, err := Parse(DefaultsFile, DefaultsYAML())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "map", "v1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	maps, err := Parse("v1.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(append(defaults, maps...))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []GroupType
	for _, g := range set.Groups {
		kinds = append(kinds, g.Kind)
	}
	if !reflect.DeepEqual(kinds, []GroupType{GroupMAP, GroupValidating, GroupInjection}) {
		t.Errorf("group kinds %v", kinds)
	}
}
