// Package validation evaluates validating policies against an object and
// explains each violation in words a person can act on.
package validation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Subject names the object being checked in messages, e.g. pod "web-1".
type Subject struct {
	Kind         string
	Name         string
	GenerateName string
}

func (s Subject) String() string {
	kind := strings.ToLower(s.Kind)
	switch {
	case s.Name != "":
		return fmt.Sprintf("%s %q", kind, s.Name)
	case s.GenerateName != "":
		return fmt.Sprintf("%s %q (generated name)", kind, s.GenerateName+"*")
	default:
		return kind
	}
}

// CheckLabels returns what the labels lack for the policy, one entry per
// rule broken; nil means the labels satisfy it.
func CheckLabels(v *policy.Validate, labels map[string]string) []string {
	var problems []string
	for _, rule := range v.Labels {
		value, ok := labels[rule.Key]
		switch {
		case !ok && len(rule.Values) == 0:
			problems = append(problems, fmt.Sprintf("label %q is missing", rule.Key))
		case !ok:
			problems = append(problems, fmt.Sprintf("label %q is missing; it must be one of %s", rule.Key, formatValues(rule.Values)))
		case len(rule.Values) > 0 && !slices.Contains(rule.Values, value):
			problems = append(problems, fmt.Sprintf("label %q must be one of %s, got %q", rule.Key, formatValues(rule.Values), value))
		}
	}
	return problems
}

// Explain words a policy violation: the policy's own message when it has one.
func Explain(s Subject, p *policy.Policy, problems []string) string {
	reason := strings.Join(problems, "; ")
	if p.Spec.Validate.Message != "" {
		reason = p.Spec.Validate.Message
	}
	return fmt.Sprintf("%s violates policy %s: %s", s, p.Name(), reason)
}

func formatValues(values []string) string { return "[" + strings.Join(values, ", ") + "]" }
