package policy

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestMatches(t *testing.T) {
	ps, err := Parse("m.yaml", []byte(header+`metadata: {name: m}
spec:
  match:
    resources: [pods, apps/deployments]
    operations: [CREATE]
    objectSelector: {matchExpressions: [{key: skip, operator: DoesNotExist}]}
    excludeNamespaces: [sandbox]
  validate: {labels: [{key: team}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	pods := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name string
		t    Target
		want bool
	}{
		{"pod create", Target{Resource: pods, Operation: "CREATE", Namespace: "a"}, true},
		{"deployment", Target{Resource: schema.GroupResource{Group: "apps", Resource: "deployments"}, Operation: "CREATE"}, true},
		{"core deployments is not apps", Target{Resource: schema.GroupResource{Resource: "deployments"}, Operation: "CREATE"}, false},
		{"update not listed", Target{Resource: pods, Operation: "UPDATE"}, false},
		{"subresource", Target{Resource: pods, SubResource: "status", Operation: "CREATE"}, false},
		{"excluded namespace", Target{Resource: pods, Operation: "CREATE", Namespace: "sandbox"}, false},
		{"object selector excludes", Target{Resource: pods, Operation: "CREATE", Labels: map[string]string{"skip": ""}}, false},
		{"old object matches", Target{Resource: pods, Operation: "CREATE", Labels: map[string]string{"skip": ""}, OldLabels: map[string]string{}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Matches(&tt.t); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}
