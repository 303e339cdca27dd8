package engine

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/internal/exception"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// gatekeeperSet is the policy package's test template with the given
// Constraints.
func gatekeeperSet(t *testing.T, constraints ...string) *policy.Set {
	t.Helper()
	tmpl, err := os.ReadFile("../policy/testdata/gatekeeper/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(tmpl)
	for _, c := range constraints {
		doc += "---\napiVersion: constraints.gatekeeper.sh/v1beta1\nkind: TestRequiredLabels\n" + c + "\n"
	}
	ps, exs, err := policy.ParseFile("gk.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.SetExceptions(exs); err != nil {
		t.Fatal(err)
	}
	return set
}

// The captured Pod (namespace shop) has the label team but not owner.
func TestGatekeeperDecides(t *testing.T) {
	const pods = "match: {kinds: [{apiGroups: [''], kinds: [Pod]}]}"
	for _, tc := range []struct {
		name        string
		constraints []string
		stored      bool
		denial      string
		warnings    []string
		results     []string // policy outcome
	}{
		{"met", []string{"metadata: {name: team}\nspec: {" + pods + ", parameters: {labels: [team]}}"}, false, "", nil, nil},
		{"deny", []string{"metadata: {name: owner}\nspec: {" + pods + ", parameters: {labels: [owner]}}"}, false,
			`[owner] missing labels: {"owner"}`, nil, []string{"testrequiredlabels/owner fail"}},
		{"two denials joined as Gatekeeper joins them", []string{
			"metadata: {name: owner}\nspec: {" + pods + ", parameters: {labels: [owner]}}",
			"metadata: {name: cost}\nspec: {parameters: {labels: [cost]}}"}, false,
			"[cost] missing labels: {\"cost\"}\n[owner] missing labels: {\"owner\"}", nil, []string{"testrequiredlabels/cost fail", "testrequiredlabels/owner fail"}},
		{"warn", []string{"metadata: {name: owner}\nspec: {enforcementAction: warn, parameters: {labels: [owner]}}"}, false,
			"", []string{`[owner] missing labels: {"owner"}`}, []string{"testrequiredlabels/owner warn"}},
		{"dryrun: reported, never denied", []string{"metadata: {name: owner}\nspec: {enforcementAction: dryrun, parameters: {labels: [owner]}}"}, false,
			"", nil, []string{"testrequiredlabels/owner warn"}},
		{"kinds not matched", []string{"metadata: {name: owner}\nspec: {match: {kinds: [{apiGroups: [apps], kinds: [Deployment]}]}, parameters: {labels: [owner]}}"}, false, "", nil, nil},
		{"excluded namespace", []string{"metadata: {name: owner}\nspec: {match: {excludedNamespaces: [sh*]}, parameters: {labels: [owner]}}"}, false, "", nil, nil},
		{"scoped: warn at the webhook, deny at audit", []string{scopedOwner}, false, "", []string{`[owner] missing labels: {"owner"}`}, []string{"testrequiredlabels/owner warn"}},
		{"scoped, stored object", []string{scopedOwner}, true, `[owner] missing labels: {"owner"}`, nil, []string{"testrequiredlabels/owner fail"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := gatekeeperSet(t, tc.constraints...)
			e := New(set, Options{})
			var ev Evaluation
			if tc.stored {
				ev = e.EvaluateStored(context.Background(), set.Groups[0], captured(t, "create"))
			} else {
				ev = e.Evaluate(context.Background(), set.Groups[0], captured(t, "create"))
			}
			if ev.Response.Message != tc.denial || ev.Response.Allowed != (tc.denial == "") {
				t.Errorf("allowed %v, message %q; want denial %q", ev.Response.Allowed, ev.Response.Message, tc.denial)
			}
			if strings.Join(ev.Response.Warnings, "|") != strings.Join(tc.warnings, "|") {
				t.Errorf("warnings %q, want %q", ev.Response.Warnings, tc.warnings)
			}
			var got []string
			for _, r := range ev.Results {
				got = append(got, r.Policy+" "+string(r.Outcome))
			}
			if strings.Join(got, ",") != strings.Join(tc.results, ",") {
				t.Errorf("results %q, want %q", got, tc.results)
			}
		})
	}
}

const scopedOwner = "metadata: {name: owner}\nspec: {enforcementAction: scoped, scopedEnforcementActions: [{action: warn, enforcementPoints: [{name: validation.gatekeeper.sh}]}, {action: deny, enforcementPoints: [{name: audit.gatekeeper.sh}]}], parameters: {labels: [owner]}}"

// A PolicyException naming a Constraint's policy lifts its violation.
func TestGatekeeperException(t *testing.T) {
	set := gatekeeperSet(t, "metadata: {name: owner}\nspec: {parameters: {labels: [owner]}}")
	ex, errs := exception.Decode([]byte(`{"apiVersion":"tollgate.dev/v1alpha1","kind":"PolicyException","metadata":{"name":"legacy"},
"spec":{"policies":["testrequiredlabels/owner"],"match":{"namespaces":["shop"]},"reason":"legacy shop"}}`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := set.SetExceptions([]*exception.Exception{ex}); err != nil {
		t.Fatal(err)
	}
	ev := New(set, Options{}).Evaluate(context.Background(), set.Groups[0], captured(t, "create"))
	if !ev.Response.Allowed || len(ev.Results) != 1 || ev.Results[0].Outcome != Skip || ev.Results[0].Exception != "legacy" {
		t.Errorf("%+v %+v, want allowed with the exception's skip", ev.Response, ev.Results)
	}
}

// A Gatekeeper Config's exclusions hold for each process as Gatekeeper's:
// the captured Pod's namespace, shop, left alone by the webhook is still
// audited.
func TestGatekeeperConfig(t *testing.T) {
	owner := "metadata: {name: owner}\nspec: {parameters: {labels: [owner]}}\n" +
		"---\napiVersion: config.gatekeeper.sh/v1alpha1\nkind: Config\nmetadata: {name: config, namespace: gatekeeper-system}\n" +
		"spec: {match: [{processes: [webhook], excludedNamespaces: [sh*]}]}"
	set := gatekeeperSet(t, owner)
	if got := strings.Join(set.Names(), ","); got != "testrequiredlabels/owner" {
		t.Errorf("policies %s: want the Constraint only, the Config applied to it", got)
	}
	e := New(set, Options{})
	if ev := e.Evaluate(context.Background(), set.Groups[0], captured(t, "create")); !ev.Response.Allowed || len(ev.Results) != 0 {
		t.Errorf("webhook: %+v %+v, want allowed with no result (shop is excluded)", ev.Response, ev.Results)
	}
	if ev := e.EvaluateStored(context.Background(), set.Groups[0], captured(t, "create")); ev.Response.Allowed || len(ev.Results) != 1 {
		t.Errorf("audit: %+v %+v, want the violation (shop is excluded from the webhook only)", ev.Response, ev.Results)
	}

	twice := owner + "\n---\napiVersion: config.gatekeeper.sh/v1alpha1\nkind: Config\nmetadata: {name: config}\n"
	tmpl, err := os.ReadFile("../policy/testdata/gatekeeper/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := policy.Parse("gk.yaml", []byte(string(tmpl)+"---\napiVersion: constraints.gatekeeper.sh/v1beta1\nkind: TestRequiredLabels\n"+twice))
	if err == nil {
		_, err = policy.NewSet(ps)
	}
	if err == nil || !strings.Contains(err.Error(), "a second Gatekeeper Config") || !strings.Contains(err.Error(), "gk.yaml: document 4") {
		t.Errorf("two Configs: %v, want the second named", err)
	}
}

// A referential Constraint with no inventory given (tollgate serve does not
// sync one yet) is an error result for the requests it selects, allowed
// as Gatekeeper's failurePolicy Ignore has it, and nothing for the others;
// with an inventory, it decides.
func TestGatekeeperNoInventory(t *testing.T) {
	tmpl, err := os.ReadFile("../policy/testdata/gatekeeper/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	referential := strings.Replace(string(tmpl), "count(missing) > 0", "count(missing) > 0\n        data.inventory.cluster[\"v1\"].Namespace[_]", 1)
	doc := referential + "---\napiVersion: constraints.gatekeeper.sh/v1beta1\nkind: TestRequiredLabels\nmetadata: {name: owner}\n" +
		"spec: {match: {namespaces: [shop]}, parameters: {labels: [owner]}}\n" +
		"---\napiVersion: constraints.gatekeeper.sh/v1beta1\nkind: TestRequiredLabels\nmetadata: {name: elsewhere}\n" +
		"spec: {match: {namespaces: [other]}, parameters: {labels: [owner]}}\n" +
		"---\napiVersion: config.gatekeeper.sh/v1alpha1\nkind: Config\nmetadata: {name: config}\nspec: {sync: {syncOnly: [{group: '', version: v1, kind: Namespace}]}}\n"
	ps, err := policy.Parse("gk.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ev := New(set, Options{}).Evaluate(ctx, set.Groups[0], captured(t, "create"))
	if !ev.Response.Allowed || len(ev.Results) != 1 || ev.Results[0].Policy != "testrequiredlabels/owner" || ev.Results[0].Outcome != Error ||
		!strings.Contains(ev.Results[0].Message, "could not be evaluated (failurePolicy Ignore)") || !strings.Contains(ev.Results[0].Message, "reads data.inventory") {
		t.Errorf("no inventory: %+v %+v, want allowed, one error naming the inventory, for the Constraint that selects shop", ev.Response, ev.Results)
	}
	var ns unstructured.Unstructured
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName("shop")
	if err := set.GatekeeperEvaluator().SetInventory(ctx, []*unstructured.Unstructured{&ns}); err != nil {
		t.Fatal(err)
	}
	ev = New(set, Options{}).Evaluate(ctx, set.Groups[0], captured(t, "create"))
	if ev.Response.Allowed || len(ev.Results) != 1 || ev.Results[0].Outcome != Fail {
		t.Errorf("with an inventory: %+v %+v, want the owner Constraint's denial", ev.Response, ev.Results)
	}
	if err := set.GatekeeperEvaluator().SetInventory(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if ev = New(set, Options{}).Evaluate(ctx, set.Groups[0], captured(t, "create")); !ev.Response.Allowed || len(ev.Results) != 0 {
		t.Errorf("inventory given, empty: %+v %+v, want allowed with no result (the Rego finds nothing)", ev.Response, ev.Results)
	}
}
