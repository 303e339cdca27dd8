package engine

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Every type of group the policy package makes has a runner.
func TestEveryGroupTypeRuns(t *testing.T) {
	for _, typ := range []policy.GroupType{policy.GroupValidating, policy.GroupMutating, policy.GroupInjection, policy.GroupVAP, policy.GroupMAP, policy.GroupGatekeeper} {
		if _, err := kindOf(&policy.Group{ID: "g", Kind: typ}); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
}

// A group of a type the engine has no runner for errs with a 500, for
// requests and subresources alike: it is never allowed unchecked.
func TestUnknownGroupTypeErrs(t *testing.T) {
	e, g, _ := defaults(t)
	odd := *g
	odd.Kind = "nosuchkind"
	for _, sub := range []string{"", "status"} {
		req := *captured(t, "create")
		req.SubResource = sub
		ev := e.Evaluate(context.Background(), &odd, &req)
		if ev.Response.Allowed || ev.Response.Code != http.StatusInternalServerError {
			t.Fatalf("subresource %q: %+v, want a 500", sub, ev.Response)
		}
		if !strings.Contains(ev.Response.Message, `policies of type "nosuchkind"`) {
			t.Errorf("subresource %q: message %q does not name the type", sub, ev.Response.Message)
		}
		if len(ev.Results) != len(odd.Policies) || ev.Results[0].Outcome != Error {
			t.Errorf("subresource %q: results %+v, want one error per policy", sub, ev.Results)
		}
	}
}
