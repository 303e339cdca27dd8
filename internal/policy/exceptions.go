package policy

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
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
		if e.Kyverno != nil {
			out = append(out, kyvernoExceptionWarnings(e, byName)...)
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
		out = append(out, ruleWarnings(e, byName)...)
	}
	return out
}

// ruleWarnings are the rules an exception names that none of its loaded
// policies has: only a validating tollgate policy's rules have names.
func ruleWarnings(e *exception.Exception, byName map[string]*Policy) []string {
	if len(e.Spec.Rules) == 0 {
		return nil
	}
	var out []string
	has := sets.New[string]()
	for _, name := range e.Spec.Policies {
		p, ok := byName[name]
		switch {
		case !ok:
		case p.Spec.Validate == nil:
			out = append(out, fmt.Sprintf("%s: spec.rules: policy %q has no named rules (only a tollgate policy's validate rules have names): the exception lifts nothing of it", e, name))
		default:
			has.Insert(p.RuleNames()...)
		}
	}
	for i, r := range e.Spec.Rules {
		if !has.Has(r) {
			out = append(out, fmt.Sprintf("%s: spec.rules[%d]: no loaded policy it names has a rule %q (a label rule's key or an expression's name): it lifts nothing", e, i, r))
		}
	}
	return out
}

// RuleNames are the names of a validating tollgate policy's rules: its
// label rules' keys and its named expressions' names.
func (p *Policy) RuleNames() []string {
	v := p.Spec.Validate
	if v == nil {
		return nil
	}
	var out []string
	for _, l := range v.Labels {
		out = append(out, l.Key)
	}
	for _, x := range v.Expressions {
		if x.Name != "" {
			out = append(out, x.Name)
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
