package engine

import (
	"context"
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
