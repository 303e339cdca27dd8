package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestExceptionExpiry: the engine's clock decides. Before expiresAt both
// policies (tollgate and VAP) skip naming the exception, and the answer says
// which were lifted; from that instant on, both deny again.
func TestExceptionExpiry(t *testing.T) {
	set, err := policy.LoadPath("testdata/exceptions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req := captured(t, "create")
	expiry := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		now     time.Time
		allowed bool
	}{
		{"a second before", expiry.Add(-time.Second), true},
		{"at expiry", expiry, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eng := New(set, Options{Clock: func() time.Time { return tt.now }})
			for _, g := range set.Groups {
				ev := eng.Evaluate(context.Background(), g, req)
				if ev.Response.Allowed != tt.allowed {
					t.Errorf("%s: allowed %v, want %v (%s)", g.ID, ev.Response.Allowed, tt.allowed, ev.Response.Message)
				}
				r := ev.Results[0]
				exempt := r.Outcome == Skip && r.Exception == "checkout" && strings.Contains(r.Message, "PolicyException checkout: checkout is migrating")
				if exempt != tt.allowed {
					t.Errorf("%s: result %+v", g.ID, r)
				}
				lifted := slices.Contains(ev.Response.Exempted, admission.Exemption{Policy: r.Policy, Exception: "checkout"})
				if lifted != tt.allowed {
					t.Errorf("%s: Response.Exempted = %v", g.ID, ev.Response.Exempted)
				}
			}
		})
	}
}

// TestRuleExemption: an exception naming rules lifts exactly those rules'
// violations and evaluation errors, by label key or expression name; the
// result is a skip only when nothing else failed, and names the exception
// whenever it lifted something.
func TestRuleExemption(t *testing.T) {
	policies, err := os.ReadFile("testdata/rule-exceptions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req := captured(t, "create")
	for _, tt := range []struct {
		rules      string // the exception's, "" for no exception
		outcome    Outcome
		has, lacks []string // in the message
		exception  string
	}{
		{"", Fail, []string{"could not be evaluated", "noSuchField"}, nil, ""},
		{"[owner]", Fail, []string{"could not be evaluated"}, nil, ""}, // boom still decides
		{"[boom]", Fail, []string{"never pinned", `label "owner" is missing`, "rule boom exempted by PolicyException lift: r"}, []string{"could not"}, "lift"},
		{"[boom, pinned]", Fail, []string{`label "owner" is missing`, "rule boom exempted", "rule pinned exempted"}, []string{"never pinned"}, "lift"},
		{"[boom, pinned, owner]", Skip, []string{"rule owner exempted", "rule pinned exempted", "rule boom exempted"}, nil, "lift"},
		{"[elsewhere]", Fail, []string{"could not be evaluated"}, []string{"exempted"}, ""},
	} {
		t.Run(tt.rules, func(t *testing.T) {
			doc := string(policies)
			if tt.rules != "" {
				doc += "---\napiVersion: tollgate.dev/v1alpha1\nkind: PolicyException\nmetadata: {name: lift}\nspec: {policies: [hygiene], rules: " +
					tt.rules + ", match: {names: [checkout-*]}, reason: r}\n"
			}
			file := filepath.Join(t.TempDir(), "p.yaml")
			if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			set, err := policy.LoadPath(file)
			if err != nil {
				t.Fatal(err)
			}
			ev := New(set, Options{}).Evaluate(context.Background(), set.Groups[0], req)
			r := ev.Results[0]
			if r.Outcome != tt.outcome || r.Exception != tt.exception {
				t.Fatalf("result %+v, want %s, exception %q", r, tt.outcome, tt.exception)
			}
			for _, s := range tt.has {
				if !strings.Contains(r.Message, s) {
					t.Errorf("message %q lacks %q", r.Message, s)
				}
			}
			for _, s := range tt.lacks {
				if strings.Contains(r.Message, s) {
					t.Errorf("message %q has %q", r.Message, s)
				}
			}
			if ev.Response.Allowed != (tt.outcome != Fail) {
				t.Errorf("allowed %v: %s", ev.Response.Allowed, ev.Response.Message)
			}
		})
	}
}

// TestRuleExemptionKeepsPolicyErrors: a policy that runs out of its cost
// budget part-way has one error, the policy's: lifting its first rule must
// not drop it (the rules after it were never evaluated).
func TestRuleExemptionKeepsPolicyErrors(t *testing.T) {
	set, err := policy.LoadPath("testdata/rule-exception-budget.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ev := New(set, Options{}).Evaluate(context.Background(), set.Groups[0], captured(t, "create"))
	r := ev.Results[0]
	if r.Outcome != Fail || !strings.Contains(r.Message, "running out of cost budget") || r.Exception != "" {
		t.Errorf("result %+v, want a failure for the cost budget, no exception used", r)
	}
}
