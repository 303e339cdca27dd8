package policy

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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

// TestBindingWebhooks: a ValidatingAdmissionPolicy's and a
// MutatingAdmissionPolicy's bindings are split alike, one webhook entry per
// distinct pair of selectors, each carrying them ANDed with the policy's
// and serving the policy with those bindings only, without the selectors.
func TestBindingWebhooks(t *testing.T) {
	byTeam := "  matchResources:\n    namespaceSelector: {matchLabels: {team: a}}\n"
	byTier := "  matchResources:\n    namespaceSelector: {matchLabels: {team: a}}\n    objectSelector: {matchLabels: {tier: web}}\n"
	constraints := `  matchConstraints:
    objectSelector: {matchLabels: {checked: "yes"}}
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
`
	for _, tc := range []struct {
		kind, policy, binding, path, suffix string
		group                               GroupType
		// served is the names of the bindings a group serves, and its
		// policy's and bindings' match resources, the policy's first.
		served func(g *Group) ([]string, []*admissionregistrationv1.MatchResources)
	}{
		{kind: "ValidatingAdmissionPolicy", policy: constraints + "  validations: [{expression: \"true\"}]\n",
			binding: "  validationActions: [Deny]\n", path: "/validate/p/", suffix: ".binding.vap.tollgate.dev", group: GroupVAP,
			served: func(g *Group) (names []string, ms []*admissionregistrationv1.MatchResources) {
				ms = append(ms, g.Policies[0].VAP.Policy.Spec.MatchConstraints)
				for _, b := range g.Policies[0].VAP.Bindings {
					names, ms = append(names, b.Name), append(ms, b.Spec.MatchResources)
				}
				return names, ms
			}},
		{kind: "MutatingAdmissionPolicy", policy: constraints + "  reinvocationPolicy: Never\n  mutations: [{patchType: JSONPatch, jsonPatch: {expression: \"[JSONPatch{op: 'test', path: '/kind', value: 'Pod'}]\"}}]\n",
			path: "/mutate/p/", suffix: ".binding.map.tollgate.dev", group: GroupMAP,
			served: func(g *Group) (names []string, ms []*admissionregistrationv1.MatchResources) {
				ms = append(ms, g.Policies[0].MAP.Policy.Spec.MatchConstraints)
				for _, b := range g.Policies[0].MAP.Bindings {
					names, ms = append(names, b.Name), append(ms, b.Spec.MatchResources)
				}
				return names, ms
			}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			binding := func(name, sel string) string {
				return vapHeader + "kind: " + tc.kind + "Binding\nmetadata: {name: " + name + "}\nspec:\n  policyName: p\n" + tc.binding + sel + "---\n"
			}
			docs := vapHeader + "kind: " + tc.kind + "\nmetadata: {name: p}\nspec:\n" + tc.policy + "---\n" +
				binding("first", byTeam) + binding("everywhere", "") + binding("second", byTeam) + binding("web", byTier) + binding(strings.Repeat("x", 70), "")
			set := parseSet(t, docs)
			ws := set.Groups[0].BindingWebhooks
			want := []struct {
				name    string
				served  []string
				ns, obj string
			}{
				{"first", []string{"first", "second"}, "team=a", "checked=yes"},
				{"everywhere", []string{"everywhere", strings.Repeat("x", 70)}, "", "checked=yes"},
				{"web", []string{"web"}, "team=a", "checked=yes,tier=web"},
			}
			if len(ws) != len(want) {
				t.Fatalf("%d webhooks, want %d", len(ws), len(want))
			}
			for i, w := range want {
				g := ws[i].Group
				if g.Path() != tc.path+w.name || g.WebhookName() != w.name+tc.suffix || g.Kind != tc.group || g.Action != tc.group.Action() {
					t.Errorf("webhook %d: %s %s %s %s", i, g.Path(), g.WebhookName(), g.Kind, g.Action)
				}
				names, ms := tc.served(g)
				if strings.Join(names, ",") != strings.Join(w.served, ",") {
					t.Errorf("%s serves bindings %v, want %v", w.name, names, w.served)
				}
				for _, m := range ms {
					if m != nil && (!selectsAll(m.NamespaceSelector) || !selectsAll(m.ObjectSelector)) {
						t.Errorf("%s: the served policy still applies a selector the apiserver applied: %v", w.name, m)
					}
				}
				ns, _ := metav1.LabelSelectorAsMap(ws[i].NamespaceSelector)
				obj, _ := metav1.LabelSelectorAsMap(ws[i].ObjectSelector)
				if labels.FormatLabels(ns) != orNone(w.ns) || labels.FormatLabels(obj) != w.obj {
					t.Errorf("%s selectors: %v %v, want %s and %s", w.name, ns, obj, w.ns, w.obj)
				}
			}
			names, ms := tc.served(&Group{Policies: set.Policies})
			if len(names) != 5 || ms[0].ObjectSelector.MatchLabels["checked"] != "yes" || ms[1].NamespaceSelector.MatchLabels["team"] != "a" {
				t.Errorf("the loaded policy lost its bindings or selectors: %v %v", names, ms)
			}
		})
	}
}

// parseSet is the set of the policies in src, which must load.
func parseSet(t *testing.T, src string) *Set {
	t.Helper()
	ps, err := Parse("test.yaml", []byte(src))
	if err == nil {
		var set *Set
		if set, err = NewSet(ps); err == nil {
			return set
		}
	}
	t.Fatal(err)
	return nil
}

func selectsAll(s *metav1.LabelSelector) bool {
	return s != nil && len(s.MatchLabels)+len(s.MatchExpressions) == 0
}

// orNone is how labels.FormatLabels writes no labels.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func TestBindingWebhookName(t *testing.T) {
	for _, name := range []string{"b", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a.", 114) + "a", strings.Repeat("a", 60) + "." + strings.Repeat("b", 60) + "." + strings.Repeat("c", 60) + ".d"} {
		got := bindingWebhookName(name, GroupMAP)
		if len(got) > 253 || !strings.HasSuffix(got, ".binding.map.tollgate.dev") {
			t.Errorf("%d characters: %q", len(got), got)
		}
		for _, label := range strings.Split(got, ".") {
			if len(label) > 63 || label == "" {
				t.Errorf("label %q of %q", label, got)
			}
		}
	}
	if bindingWebhookName(strings.Repeat("a", 64), GroupVAP) == bindingWebhookName(strings.Repeat("a", 65), GroupVAP) {
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
