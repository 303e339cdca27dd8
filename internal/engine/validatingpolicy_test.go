package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestValidateVAPUndecided: where a ValidatingAdmissionPolicy needs a
// namespace the engine does not know, the policy's failurePolicy decides
// and the result says why; on a binding's webhook path the apiserver's
// selection stands.
func TestValidateVAPUndecided(t *testing.T) {
	set, err := policy.LoadPath("../validatingpolicy/testdata/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := New(set, Options{})
	req := captured(t, "create") // a Pod in namespace shop
	// group is the policy's own group, or the webhook entry that serves
	// <policy>/<binding>, which other policies may share.
	group := func(id string) *policy.Group {
		if g := set.Group(id); g != nil {
			return g
		}
		for _, g := range set.Groups {
			for _, w := range g.BindingWebhooks {
				for _, p := range w.Group.Policies {
					if p.Name()+"/"+p.VAP.Bindings[0].Name == id {
						return w.Group
					}
				}
			}
		}
		t.Fatalf("no group %s", id)
		return nil
	}
	for _, tc := range []struct {
		group   string
		allowed bool
		outcome Outcome
		message string
	}{
		{"gold-only", true, Error, `could not be evaluated (failurePolicy Ignore): namespace "shop" labels unknown: run with --kubeconfig or give the Namespace object`},
		{"gold-only/gold-only", false, Fail, "ValidatingAdmissionPolicy 'gold-only' with binding 'gold-only' denied request: gold namespaces take no pods"},
		{"namespace-tier/namespace-tier", true, Error, `could not be evaluated (failurePolicy Ignore): namespaceObject: namespace "shop" unknown: run with --kubeconfig or give the Namespace object`},
		{"frozen", false, Fail, "ValidatingAdmissionPolicy 'frozen' with binding 'frozen' denied request: pods are frozen here"},
	} {
		t.Run(tc.group, func(t *testing.T) {
			ev := e.Evaluate(context.Background(), group(tc.group), req)
			var r Result
			for _, r = range ev.Results {
				if r.Policy == strings.Split(tc.group, "/")[0] {
					break
				}
			}
			if ev.Response.Allowed != tc.allowed || r.Outcome != tc.outcome || !strings.Contains(r.Message, tc.message) {
				t.Errorf("allowed=%v %s %q\nwant allowed=%v %s %q", ev.Response.Allowed, r.Outcome, r.Message, tc.allowed, tc.outcome, tc.message)
			}
		})
	}
}
