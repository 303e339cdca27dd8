package labelrule

import (
	"slices"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

func TestProblems(t *testing.T) {
	env := &policy.Validate{Labels: []policy.LabelRule{{Key: "environment", Values: []string{"dev", "prod"}}}}
	owner := &policy.Validate{Labels: []policy.LabelRule{{Key: "owner"}, {Key: "environment", Values: []string{"dev"}}}}
	tests := []struct {
		name   string
		v      *policy.Validate
		labels map[string]string
		want   []string
	}{
		{"allowed value", env, map[string]string{"environment": "prod"}, nil},
		{"wrong value", env, map[string]string{"environment": "staging"}, []string{`label "environment" must be one of [dev, prod], got "staging"`}},
		{"empty value is a value", env, map[string]string{"environment": ""}, []string{`label "environment" must be one of [dev, prod], got ""`}},
		{"missing", env, nil, []string{`label "environment" is missing; it must be one of [dev, prod]`}},
		{"any value present", owner, map[string]string{"owner": "", "environment": "dev"}, nil},
		{"every rule reported", owner, map[string]string{"environment": "prod"}, []string{`label "owner" is missing`, `label "environment" must be one of [dev], got "prod"`}},
		{"case matters", env, map[string]string{"environment": "Prod"}, []string{`label "environment" must be one of [dev, prod], got "Prod"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Problems(tt.v, tt.labels); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	problems := []string{`label "environment" must be one of [dev, prod], got "staging"`, "another"}
	tests := []struct {
		subject Subject
		want    string
	}{
		{Subject{Kind: "Pod", Name: "web-1"}, `pod "web-1" violates policy require-environment: label "environment" must be one of [dev, prod], got "staging"; another`},
		{Subject{Kind: "Pod", GenerateName: "web-"}, `pod "web-*" (generated name) violates policy require-environment: label "environment" must be one of [dev, prod], got "staging"; another`},
		{Subject{Kind: "Deployment", Name: "api", Template: true}, `the pod template of deployment "api" violates policy require-environment: label "environment" must be one of [dev, prod], got "staging"; another`},
	}
	for _, tt := range tests {
		if got := Explain(tt.subject, "require-environment", problems); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}
