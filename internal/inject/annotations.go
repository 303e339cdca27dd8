package inject

import (
	"slices"
	"strings"
)

// The annotations injection reads and writes.
const (
	// StatusAnnotation records which injection policies a Pod has received.
	StatusAnnotation = "tollgate.dev/status"
	// OptOutAnnotation set to false, no, n or off (any case) keeps a Pod as it is.
	OptOutAnnotation = "tollgate.dev/inject"
)

// OptsOut tells whether the Pod's annotation asks to be left as it is.
// Each policy decides whether it agrees (policy.Policy.AllowsOptOut).
func (p *Pod) OptsOut() bool { return optedOut(p.Annotations.OptOut) }

// optedOut tells whether the value of the opt-out annotation ("" when
// absent) refuses injection.
func optedOut(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "n", "off":
		return true
	}
	return false
}

// parseStatus reads the policy names of a status annotation: a comma-separated list.
func parseStatus(v string) []string {
	var names []string
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// formatStatus writes policy names as a sorted, comma-separated list.
func formatStatus(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ",")
}
