package metrics

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/engine/enginetest"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestPolicyDecisionsApplies: the engine's answers, observed as the server
// observes them, count a decision only for the policies that applied: a
// policy with no binding, whose binding does not select the namespace or
// object, or whose match conditions are false is not counted as allowing.
func TestPolicyDecisionsApplies(t *testing.T) {
	eng := enginetest.Applies(t)
	set := eng.Set()
	m := New()
	review := func(ns string, labels map[string]string, data map[string]string) {
		meta := map[string]any{"name": "settings", "namespace": ns}
		if labels != nil {
			meta["labels"] = labels
		}
		obj, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})
		gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
		req := &admission.Request{UID: "u", Operation: admission.Create, Resource: gvr, Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Name: "settings", Namespace: ns}
		req.SetObjects(obj, nil)
		for _, g := range set.Groups {
			if g.Action == policy.ActionValidate {
				m.Observe(g.Path(), eng.Evaluate(context.Background(), g, req).Response, time.Millisecond, false)
			}
		}
	}
	clean := map[string]string{"greeting": "hello"}
	review("team-a", nil, clean)                                                               // vap and validate-team-a apply, and allow
	review("team-b", nil, clean)                                                               // nothing applies
	review("team-a", map[string]string{"track": "canary", "exempt": "yes"}, clean)             // validate-canary only
	review("team-b", map[string]string{"track": "canary"}, map[string]string{"password": "x"}) // vap and validate-canary deny
	want := `
# HELP tollgate_policy_decisions_total Policies that acted on a review, by policy and decision.
# TYPE tollgate_policy_decisions_total counter
tollgate_policy_decisions_total{decision="allowed",policy="validate-canary"} 1
tollgate_policy_decisions_total{decision="allowed",policy="validate-team-a"} 1
tollgate_policy_decisions_total{decision="allowed",policy="vap"} 1
tollgate_policy_decisions_total{decision="denied",policy="validate-canary"} 1
tollgate_policy_decisions_total{decision="denied",policy="vap"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "tollgate_policy_decisions_total"); err != nil {
		t.Error(err)
	}
}
