package policy

import (
	"strings"
	"testing"
	"time"
)

func TestExceptionWarnings(t *testing.T) {
	ps, exs, err := ParseFile("x.yaml", []byte(header+`metadata: {name: require-team}
spec: {match: {resources: [pods], podControllers: true, excludeNamespaces: [legacy]}, validate: {labels: [{key: team}]}}
---
apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: fine}
spec: {policies: [require-team], match: {kinds: [apps/Deployment, Pod]}, reason: r, expiresAt: "2030-02-01T00:00:00Z"}
---
apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: soon}
spec: {policies: [require-team], match: {names: [a]}, reason: r, expiresAt: "2030-01-03T00:00:00Z"}
---
apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: gone}
spec: {policies: [require-team], match: {names: [a]}, reason: r, expiresAt: "2029-12-31T00:00:00Z"}
---
apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: nothing}
spec: {policies: [require-team, requier-team], match: {kinds: [ConfigMap, Service]}, reason: r}
---
apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: custom}
spec: {policies: [require-team], match: {kinds: [example.com/Widget], namespaces: ["kube-*"]}, reason: r}
---
apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: excluded}
spec: {policies: [require-team], match: {namespaces: [kube-system, legacy]}, reason: r}
---
apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: rules}
spec: {policies: [require-team, add-tier], rules: [team, tier], match: {names: [a]}, reason: r}
---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: add-tier}
spec: {match: {resources: [pods]}, mutate: {labels: {tier: web}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	set.Exceptions = exs
	got := set.ExceptionWarnings(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	want := []string{
		`"soon" (x.yaml: document 3): expires in 48h0m0s, at 2030-01-03T00:00:00Z`,
		`"gone" (x.yaml: document 4): expired at 2029-12-31T00:00:00Z: it is applied nowhere`,
		`"nothing" (x.yaml: document 5): spec.match.kinds: policy "require-team" matches none of ConfigMap, Service`,
		`"nothing" (x.yaml: document 5): spec.policies[1]: no policy "requier-team" is loaded`,
		`"excluded" (x.yaml: document 7): spec.match.namespaces: policy "require-team" never applies in kube-system, legacy`,
		`"rules" (x.yaml: document 8): spec.rules: policy "add-tier" has no named rules`,
		`"rules" (x.yaml: document 8): spec.rules[1]: no loaded policy it names has a rule "tier"`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d warnings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
}
