package exception

import (
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Object is what an exception looks at in a request's object.
type Object struct {
	Kind      schema.GroupKind
	Namespace string
	Name      string
	Labels    map[string]string
}

// Exempts tells whether the exception lifts policy for obj, whatever the time.
func (e *Exception) Exempts(policy string, obj Object) bool {
	if !slices.Contains(e.Spec.Policies, policy) {
		return false
	}
	m := e.Spec.Match
	if len(m.Namespaces) > 0 && !anyMatch(m.Namespaces, obj.Namespace) {
		return false
	}
	if len(m.Names) > 0 && !anyMatch(m.Names, obj.Name) {
		return false
	}
	if len(m.Kinds) > 0 && !slices.ContainsFunc(m.Kinds, func(k string) bool { return KindMatches(k, obj.Kind) }) {
		return false
	}
	return e.selector == nil || e.selector.Matches(labels.Set(obj.Labels))
}

// KindMatches tells whether a kinds entry (Kind or group/Kind) names gk.
func KindMatches(entry string, gk schema.GroupKind) bool {
	group, kind, qualified := strings.Cut(entry, "/")
	if !qualified {
		return entry == gk.Kind
	}
	return group == gk.Group && kind == gk.Kind
}

func anyMatch(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}
