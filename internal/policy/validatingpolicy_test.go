package policy

import (
	"strings"
	"testing"
)

const vapHeader = "apiVersion: admissionregistration.k8s.io/v1\n"

func TestVAPLoads(t *testing.T) {
	docs := vapHeader + `kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  validations: [{expression: "object.spec.replicas <= 5"}]
---
` + vapHeader + `kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas-binding}
spec: {policyName: replicas, validationActions: [Deny, Audit]}
`
	ps, err := Parse("vap.yaml", []byte(docs))
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Policies) != 1 || set.Policies[0].VAP == nil || len(set.Policies[0].VAP.Bindings) != 1 {
		t.Fatalf("policies %v", set.Names())
	}
	mc := set.Policies[0].VAP.Policy.Spec.MatchConstraints
	if mc.NamespaceSelector == nil || mc.ObjectSelector == nil || *mc.MatchPolicy != "Equivalent" || *mc.ResourceRules[0].Scope != "*" ||
		*set.Policies[0].VAP.Policy.Spec.FailurePolicy != "Fail" {
		t.Error("the apiserver's defaults were not applied")
	}
	if g := set.Groups[0]; g.Path() != "/validate/replicas" || g.Action != ActionValidate {
		t.Errorf("group %s %s", g.Path(), g.Action)
	}
}

func TestVAPRejects(t *testing.T) {
	vap := func(spec string) string {
		return vapHeader + "kind: ValidatingAdmissionPolicy\nmetadata: {name: v}\nspec:\n" + spec
	}
	binding := func(ref string) string {
		return vapHeader + "kind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {policyName: v, validationActions: [Deny], paramRef: " + ref + "}\n"
	}
	rules := "  matchConstraints:\n    resourceRules: [{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [pods]}]\n"
	tests := []struct {
		name, doc, want string
	}{
		{"paramKind without kind", vap(rules + "  paramKind: {apiVersion: v1}\n  validations: [{expression: 'true'}]\n"), `ValidatingAdmissionPolicy "v": spec.paramKind.kind: Required value`},
		{"paramRef name and selector", binding("{name: p, selector: {}, parameterNotFoundAction: Deny}"), "spec.paramRef.name: Forbidden: name and selector are mutually exclusive"},
		{"paramRef neither", binding("{parameterNotFoundAction: Deny}"), "spec.paramRef: Required value: one of name or selector must be specified"},
		{"paramRef no action", binding("{name: p}"), "spec.paramRef.parameterNotFoundAction: Required value"},
		{"paramRef bad action", binding("{name: p, parameterNotFoundAction: Ignore}"), `spec.paramRef.parameterNotFoundAction: Unsupported value: "Ignore": supported values: "Allow", "Deny"`},
		{"no rules", vap("  validations: [{expression: 'true'}]\n"), "spec.matchConstraints.resourceRules: Required value"},
		{"does not compile", vap(rules + "  validations: [{expression: 'object.spec.('}]\n"), `spec.validations[0].expression: Invalid value: "object.spec.("`},
		{"bad message expression", vap(rules + "  validations: [{expression: 'true', messageExpression: '1'}]\n"), "spec.validations[0].messageExpression"},
		{"unknown field", vap(rules + "  validations: [{expression: 'true', messsage: x}]\n"), `unknown field "spec.validations[0].messsage"`},
		{"deny and warn", vapHeader + "kind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {policyName: v, validationActions: [Deny, Warn]}\n", "must not contain both Deny and Warn"},
		{"no actions", vapHeader + "kind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {policyName: v}\n", "spec.validationActions: Required value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("n.yaml", []byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant %q", err, tt.want)
			}
		})
	}
	ps, err := Parse("n.yaml", []byte(vapHeader+"kind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {policyName: missing, validationActions: [Deny]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSet(ps); err == nil || !strings.Contains(err.Error(), `ValidatingAdmissionPolicyBinding "b": spec.policyName: ValidatingAdmissionPolicy "missing" is not loaded`) {
		t.Errorf("dangling binding: %v", err)
	}
}

// A binding's paramRef is accepted for a policy without paramKind (the
// apiserver ignores it), and documents of other API groups are objects,
// not broken policies.
func TestVAPParamsAccepted(t *testing.T) {
	docs := vapHeader + `kind: ValidatingAdmissionPolicy
metadata: {name: v}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations: [{expression: "true"}]
---
` + vapHeader + `kind: ValidatingAdmissionPolicyBinding
metadata: {name: b}
spec: {policyName: v, validationActions: [Deny], paramRef: {name: p, parameterNotFoundAction: Deny}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: p, namespace: default}
settings: {a: b}
`
	ps, _, objs, err := ParseAll("vap.yaml", []byte(docs))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || len(objs) != 1 || objs[0].GetKind() != "ConfigMap" {
		t.Fatalf("policies %d, objects %v", len(ps), objs)
	}
}
