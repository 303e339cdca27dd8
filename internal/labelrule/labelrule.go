// Package labelrule evaluates the label rules of a validating policy against
// an object's labels and explains each violation in words a person can act on.
// (CEL validation is in internal/engine and internal/cel.)
package labelrule

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
	// Template is set when a Pod controller's Pod template is checked.
	Template bool
}

func (s Subject) String() string {
	kind := strings.ToLower(s.Kind)
	var out string
	switch {
	case s.Name != "":
		out = fmt.Sprintf("%s %q", kind, s.Name)
	case s.GenerateName != "":
		out = fmt.Sprintf("%s %q (generated name)", kind, s.GenerateName+"*")
	default:
		out = kind
	}
	if s.Template {
		return "the pod template of " + out
	}
	return out
}

// Problems returns what the labels lack for the policy, one entry per
// rule broken; nil means the labels satisfy it.
func Problems(v *policy.Validate, labels map[string]string) []string {
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

// Explain words a policy violation for the user.
func Explain(s Subject, policyName string, problems []string) string {
	return fmt.Sprintf("%s violates policy %s: %s", s, policyName, strings.Join(problems, "; "))
}

func formatValues(values []string) string { return "[" + strings.Join(values, ", ") + "]" }
