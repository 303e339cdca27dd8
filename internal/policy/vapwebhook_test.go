package policy

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func TestAndSelectors(t *testing.T) {
	in := func(k string, v ...string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: v}
	}
	for _, tc := range []struct {
		name       string
		a, b, want *metav1.LabelSelector
	}{
		{"both empty", nil, &metav1.LabelSelector{}, &metav1.LabelSelector{}},
		{"one side", &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, nil, &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}},
		{"labels merge", &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, &metav1.LabelSelector{MatchLabels: map[string]string{"stage": "prod", "team": "a"}},
			&metav1.LabelSelector{MatchLabels: map[string]string{"team": "a", "stage": "prod"}}},
		{"a conflict is kept, so that nothing matches", &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}},
			&metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}, MatchExpressions: []metav1.LabelSelectorRequirement{in("team", "b")}}},
		{"expressions append", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{in("x", "1")}}, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{in("y", "2")}},
			&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{in("x", "1"), in("y", "2")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := yaml.Marshal(AndSelectors(tc.a, tc.b))
			want, _ := yaml.Marshal(tc.want)
			if string(got) != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
			for _, s := range []*metav1.LabelSelector{tc.a, tc.b} {
				if s != nil && len(s.MatchExpressions) > 1 {
					t.Error("an input was changed")
				}
			}
		})
	}
}

func TestVAPWebhooks(t *testing.T) {
	binding := func(name, sel string) string {
		return vapHeader + "kind: ValidatingAdmissionPolicyBinding\nmetadata: {name: " + name + "}\nspec:\n  policyName: v\n  validationActions: [Deny]\n" + sel + "---\n"
	}
	byTeam := "  matchResources:\n    namespaceSelector: {matchLabels: {team: a}}\n"
	docs := vapHeader + `kind: ValidatingAdmissionPolicy
metadata: {name: v}
spec:
  matchConstraints:
    objectSelector: {matchLabels: {checked: "yes"}}
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations: [{expression: "true"}]
---
` + binding("first", byTeam) + binding("everywhere", "") + binding("second", byTeam) + binding(strings.Repeat("x", 70), "")
	ps, err := Parse("v.yaml", []byte(docs))
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	ws := set.Groups[0].VAPWebhooks
	if len(ws) != 2 {
		t.Fatalf("%d webhooks, want 2 (the 70-character binding has no selectors, as everywhere)", len(ws))
	}
	if g := ws[0].Group; g.Path() != "/validate/v/first" || g.WebhookName() != "first.binding.vap.tollgate.dev" || g.Kind != GroupVAP {
		t.Errorf("first webhook: %s %s %s", g.Path(), g.WebhookName(), g.Kind)
	}
	served := ws[0].Group.Policies[0].VAP
	if len(served.Bindings) != 2 || served.Bindings[0].Name != "first" || served.Bindings[1].Name != "second" {
		t.Errorf("bindings served at first: %v", served.Bindings)
	}
	if len(served.Bindings[0].Spec.MatchResources.NamespaceSelector.MatchLabels) != 0 || len(served.Policy.Spec.MatchConstraints.ObjectSelector.MatchLabels) != 0 {
		t.Error("the served policy still applies selectors the apiserver applied")
	}
	if ws[0].NamespaceSelector.MatchLabels["team"] != "a" || ws[0].ObjectSelector.MatchLabels["checked"] != "yes" {
		t.Errorf("selectors: %v %v", ws[0].NamespaceSelector, ws[0].ObjectSelector)
	}
	loaded := set.Policies[0].VAP
	if loaded.Bindings[0].Spec.MatchResources.NamespaceSelector.MatchLabels["team"] != "a" || loaded.Policy.Spec.MatchConstraints.ObjectSelector.MatchLabels["checked"] != "yes" {
		t.Error("the loaded policy lost its selectors")
	}
	if g := ws[1].Group; g.Path() != "/validate/v/everywhere" || len(g.Policies[0].VAP.Bindings) != 2 {
		t.Errorf("second webhook: %s with %d bindings", g.Path(), len(g.Policies[0].VAP.Bindings))
	}
}

func TestBindingWebhookName(t *testing.T) {
	for _, name := range []string{"b", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a.", 114) + "a", strings.Repeat("a", 60) + "." + strings.Repeat("b", 60) + "." + strings.Repeat("c", 60) + ".d"} {
		got := bindingWebhookName(name)
		if len(got) > 253 || !strings.HasSuffix(got, ".binding.vap.tollgate.dev") {
			t.Errorf("%d characters: %q", len(got), got)
		}
		for _, label := range strings.Split(got, ".") {
			if len(label) > 63 || label == "" {
				t.Errorf("label %q of %q", label, got)
			}
		}
	}
	if bindingWebhookName(strings.Repeat("a", 64)) == bindingWebhookName(strings.Repeat("a", 65)) {
		t.Error("shortened names collide")
	}
}

func TestVAPNames(t *testing.T) {
	policyDoc := vapHeader + "kind: ValidatingAdmissionPolicy\nmetadata: {name: v}\nspec:\n  matchConstraints:\n    resourceRules: [{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [pods]}]\n  validations: [{expression: 'true'}]\n---\n"
	b := vapHeader + "kind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {policyName: v, validationActions: [Deny]}\n---\n"
	if _, err := Parse("n.yaml", []byte(strings.Replace(policyDoc, "name: v}", "name: V/x}", 1))); err == nil || !strings.Contains(err.Error(), "metadata.name: Invalid value: \"V/x\"") {
		t.Errorf("policy name: %v", err)
	}
	if _, err := Parse("n.yaml", []byte(strings.Replace(b, "name: b}", "name: b_1}", 1))); err == nil || !strings.Contains(err.Error(), "RFC 1123 subdomain") {
		t.Errorf("binding name: %v", err)
	}
	ps, err := Parse("n.yaml", []byte(policyDoc+b+b))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSet(ps); err == nil || !strings.Contains(err.Error(), `duplicate ValidatingAdmissionPolicyBinding name "b"`) {
		t.Errorf("duplicate binding: %v", err)
	}
}
