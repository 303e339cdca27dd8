package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gkTemplate(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gatekeeper", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func gkConstraint(kind, name, spec string) string {
	return "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: " + kind + "\nmetadata: {name: " + name + "}\nspec: " + spec + "\n"
}

func TestGatekeeperLoads(t *testing.T) {
	doc := gkTemplate(t) + "---\n" +
		gkConstraint("TestRequiredLabels", "team", "{match: {kinds: [{apiGroups: [''], kinds: [Pod]}, {apiGroups: [apps], kinds: [Deployment]}]}, parameters: {labels: [team]}}") + "---\n" +
		gkConstraint("TestRequiredLabels", "owner", "{parameters: {labels: [owner]}}")
	ps, err := Parse("gk.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(set.Names(), ","); got != "testrequiredlabels/team,testrequiredlabels/owner" {
		t.Errorf("policies %s: want the two Constraints, the template left out", got)
	}
	if len(set.Groups) != 1 {
		t.Fatalf("%d groups, want one for every Constraint", len(set.Groups))
	}
	g := set.Groups[0]
	if g.Kind != GroupGatekeeper || g.ID != GatekeeperGroupID || g.WebhookName() != "gatekeeper.validate.tollgate.dev" || g.FailurePolicy != Ignore {
		t.Errorf("group %s %s %s %s", g.Kind, g.ID, g.WebhookName(), g.FailurePolicy)
	}
	if got := strings.Join(g.Match.Resources, ","); got != "*" {
		t.Errorf("group resources %s: want * (one Constraint names no kinds)", got)
	}
	if got := strings.Join(set.Policies[0].Spec.Match.Resources, ","); got != "/*,apps/*" {
		t.Errorf("team's resources %s, want its kinds' API groups", got)
	}
	if set.Policies[0].Gatekeeper.Evaluator == nil || set.Policies[0].Gatekeeper.Evaluator != set.Policies[1].Gatekeeper.Evaluator {
		t.Error("the Constraints do not share one evaluator")
	}
}

func TestGatekeeperRejects(t *testing.T) {
	tmpl := func(t *testing.T) string { return gkTemplate(t) + "---\n" }
	for _, tc := range []struct {
		name string
		doc  func(t *testing.T) string
		want string
	}{
		{"no template for the kind", func(t *testing.T) string {
			return gkConstraint("K8sNoSuchKind", "x", "{}")
		}, `K8sNoSuchKind "x": no ConstraintTemplate of the set defines kind K8sNoSuchKind`},
		{"parameters the schema refuses", func(t *testing.T) string {
			return tmpl(t) + gkConstraint("TestRequiredLabels", "x", "{parameters: {labels: team}}")
		}, "labels"},
		{"CEL only", func(t *testing.T) string {
			return "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: celonly}\nspec:\n  crd: {spec: {names: {kind: CelOnly}}}\n  targets:\n  - target: admission.k8s.gatekeeper.sh\n    code: [{engine: K8sNativeValidation, source: {validations: [{expression: 'true', message: m}]}}]\n"
		}, "k8scel driver"},
		{"Rego that does not compile", func(t *testing.T) string {
			return strings.Replace(tmpl(t), "count(missing) > 0", "count(missing) >", 1) + gkConstraint("TestRequiredLabels", "x", "{}")
		}, `ConstraintTemplate "testrequiredlabels"`},
		{"two templates of one kind", func(t *testing.T) string {
			return tmpl(t) + strings.Replace(tmpl(t), "name: testrequiredlabels", "name: again", 1) + gkConstraint("TestRequiredLabels", "x", "{}")
		}, "kind TestRequiredLabels is also defined"},
		{"referential, nothing synced", func(t *testing.T) string {
			return strings.Replace(tmpl(t), "count(missing) > 0", "count(missing) > 0\n        data.inventory.cluster[_]", 1) + gkConstraint("TestRequiredLabels", "x", "{}")
		}, "no Gatekeeper Config (spec.sync.syncOnly) or SyncSet of the set syncs anything"},
		{"referential, what it requires not synced", func(t *testing.T) string {
			return strings.Replace(strings.Replace(tmpl(t), "count(missing) > 0", "count(missing) > 0\n        data.inventory.cluster[_]", 1),
				"name: testrequiredlabels", "name: testrequiredlabels\n  annotations: {metadata.gatekeeper.sh/requires-sync-data: "+`'"[[{"groups": [""], "versions": ["v1"], "kinds": ["Namespace"]}]]"'`+"}", 1) +
				"apiVersion: config.gatekeeper.sh/v1alpha1\nkind: Config\nmetadata: {name: config}\nspec: {sync: {syncOnly: [{group: '', version: v1, kind: Pod}]}}\n---\n" +
				gkConstraint("TestRequiredLabels", "x", "{}")
		}, "needs one of"},
		{"unknown template field", func(t *testing.T) string {
			return strings.Replace(tmpl(t), "  crd:\n", "  bogus: 1\n  crd:\n", 1)
		}, "bogus"},
		{"unknown template version", func(t *testing.T) string {
			return strings.Replace(tmpl(t), "templates.gatekeeper.sh/v1", "templates.gatekeeper.sh/v9", 1)
		}, "v9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := Parse("gk.yaml", []byte(tc.doc(t)))
			if err == nil {
				_, err = NewSet(ps)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), "gk.yaml: document") {
				t.Errorf("error %v does not name the document", err)
			}
		})
	}
}

// A SyncSet syncs for referential templates as the Config's syncOnly does,
// and is not a policy of the set.
func TestGatekeeperSyncSet(t *testing.T) {
	referential := strings.Replace(strings.Replace(gkTemplate(t), "count(missing) > 0", "count(missing) > 0\n        data.inventory.cluster[_]", 1),
		"name: testrequiredlabels", "name: testrequiredlabels\n  annotations: {metadata.gatekeeper.sh/requires-sync-data: "+`'"[[{"groups": [""], "versions": ["v1"], "kinds": ["Namespace"]}]]"'`+"}", 1) + "---\n" +
		gkConstraint("TestRequiredLabels", "x", "{}") + "---\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"syncs what the template needs", "apiVersion: syncset.gatekeeper.sh/v1alpha1\nkind: SyncSet\nmetadata: {name: namespaces}\nspec: {gvks: [{group: '', version: v1, kind: Namespace}]}\n", ""},
		{"syncs something else", "apiVersion: syncset.gatekeeper.sh/v1alpha1\nkind: SyncSet\nmetadata: {name: pods}\nspec: {gvks: [{group: '', version: v1, kind: Pod}]}\n", "needs one of /v1:Namespace"},
		{"unknown field", "apiVersion: syncset.gatekeeper.sh/v1alpha1\nkind: SyncSet\nmetadata: {name: x}\nspec: {kinds: [Namespace]}\n", `unknown field "spec.kinds"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := Parse("gk.yaml", []byte(referential+tc.doc))
			var set *Set
			if err == nil {
				set, err = NewSet(ps)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "":
				if got := strings.Join(set.Names(), ","); got != "testrequiredlabels/x" {
					t.Errorf("policies %s, want the Constraint only", got)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}
