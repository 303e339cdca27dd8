package policy

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/tollgate-dev/tollgate/internal/exception"
)

// ExpiryWarning is how soon before it expires lint warns about an exception.
const ExpiryWarning = 7 * 24 * time.Hour

// ExceptionWarnings lists what lint should say of the set's exceptions at
// now: those expired or expiring within ExpiryWarning, and those that can
// never exempt anything: a policy not loaded, or only kinds the policy
// never matches.
func (s *Set) ExceptionWarnings(now time.Time) []string {
	byName := map[string]*Policy{}
	for _, p := range s.Policies {
		byName[p.Name()] = p
	}
	var out []string
	for _, e := range s.Exceptions {
		if at := e.Spec.ExpiresAt; at != nil {
			switch left := at.Sub(now); {
			case left <= 0:
				out = append(out, fmt.Sprintf("%s: expired at %s: it is applied nowhere", e, at.UTC().Format(time.RFC3339)))
			case left <= ExpiryWarning:
				out = append(out, fmt.Sprintf("%s: expires in %s, at %s", e, left.Round(time.Minute), at.UTC().Format(time.RFC3339)))
			}
		}
		for i, name := range e.Spec.Policies {
			p, ok := byName[name]
			if !ok {
				out = append(out, fmt.Sprintf("%s: spec.policies[%d]: no policy %q is loaded: it exempts nothing from it", e, i, name))
				continue
			}
			if kinds := e.Spec.Match.Kinds; len(kinds) > 0 && !anyKindMatched(p, kinds) {
				out = append(out, fmt.Sprintf("%s: spec.match.kinds: policy %q matches none of %s", e, name, strings.Join(kinds, ", ")))
			}
			if ns := e.Spec.Match.Namespaces; len(ns) > 0 && allExcluded(p, ns) {
				out = append(out, fmt.Sprintf("%s: spec.match.namespaces: policy %q never applies in %s", e, name, strings.Join(ns, ", ")))
			}
		}
	}
	return out
}

// allExcluded tells whether every namespace is one no policy applies in
// (the system namespaces) or the policy excludes; a pattern may match others.
func allExcluded(p *Policy, namespaces []string) bool {
	for _, n := range namespaces {
		if strings.ContainsAny(n, "*?[") || !slices.Contains(SystemNamespaces, n) && !p.compiled.excluded.Has(n) {
			return false
		}
	}
	return true
}

// anyKindMatched tells whether the policy may match any of the kinds. A
// kind tollgate does not know (a custom resource) may be matched.
func anyKindMatched(p *Policy, kinds []string) bool {
	for _, k := range kinds {
		resources, known := builtinResources(k)
		if !known {
			return true
		}
		for _, gr := range resources {
			if p.MayMatchResource(gr) {
				return true
			}
		}
	}
	return false
}

// builtinResources are the resources of a kinds entry among Kubernetes'
// built-in kinds; known is false when none is.
func builtinResources(entry string) (out []schema.GroupResource, known bool) {
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == "__internal" || strings.HasSuffix(gvk.Kind, "List") || !exception.KindMatches(entry, gvk.GroupKind()) {
			continue
		}
		gvr, _ := meta.UnsafeGuessKindToResource(gvk)
		out = append(out, gvr.GroupResource())
	}
	return out, len(out) > 0
}
