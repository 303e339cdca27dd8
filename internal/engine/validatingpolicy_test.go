package engine

import (
	"context"
	"encoding/json"
	"slices"
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

// TestSharedWebhook: policies sharing a binding's webhook entry are each
// decided alone, and the answer is one the apiserver could give with a
// webhook per policy: the first denial's words, every warning and audit
// annotation, a result per policy (replicas does not match a Pod).
func TestSharedWebhook(t *testing.T) {
	set, err := policy.LoadPath("../registration/testdata/shared-webhooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := set.Groups[0].BindingWebhooks[0].Group
	req := captured(t, "create")
	var pod map[string]any
	if err := json.Unmarshal(req.Object(), &pod); err != nil {
		t.Fatal(err)
	}
	delete(pod["metadata"].(map[string]any)["labels"].(map[string]any), "team")
	pod["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "docker.io/library/nginx:latest"
	obj, _ := json.Marshal(pod)
	req.SetObjects(obj, nil)
	ev := New(set, Options{}).Evaluate(context.Background(), g, req)
	resp := ev.Response
	if want := "ValidatingAdmissionPolicy 'images' with binding 'images' denied request: images must come from registry.example.com"; resp.Allowed || resp.Message != want || resp.Code != 422 {
		t.Errorf("allowed=%v %d %q, want denied 422 %q", resp.Allowed, resp.Code, resp.Message, want)
	}
	if want := []string{"Validation failed for ValidatingAdmissionPolicy 'team-warning' with binding 'team-warning': pods should name a team"}; !slices.Equal(resp.Warnings, want) {
		t.Errorf("warnings %q, want %q", resp.Warnings, want)
	}
	if a := resp.AuditAnnotations["validation.policy.admission.k8s.io/validation_failure"]; !strings.Contains(a, `"policy":"team-warning"`) {
		t.Errorf("audit annotations %v lack team-warning's failure", resp.AuditAnnotations)
	}
	var got []string
	for _, r := range ev.Results {
		got = append(got, r.Policy+" "+string(r.Outcome))
	}
	if want := []string{"images fail", "replicas skip", "images-again fail", "team-warning warn"}; !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
}
