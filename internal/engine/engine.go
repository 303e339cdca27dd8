// Package engine decides admission requests with the loaded policies. It is
// the one evaluation path: the HTTP server calls it, and so will every
// offline command, so what a policy does cannot depend on how it is run.
package engine

import (
	"context"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Options configure an Engine.
type Options struct {
	// OwnNamespace is tollgate's own namespace, never injected nor validated
	// so that tollgate can always restart itself.
	OwnNamespace string
}

// Engine holds a policy set and the namespaces no policy may touch.
type Engine struct {
	set      *policy.Set
	excluded sets.Set[string]
}

// New returns an engine for the set.
func New(set *policy.Set, opts Options) *Engine {
	excluded := sets.New(policy.SystemNamespaces...)
	if opts.OwnNamespace != "" {
		excluded.Insert(opts.OwnNamespace)
	}
	return &Engine{set: set, excluded: excluded}
}

// Set returns the engine's policies.
func (e *Engine) Set() *policy.Set { return e.set }

// Excluded returns the namespaces the engine never acts in, sorted.
func (e *Engine) Excluded() []string { return sets.List(e.excluded) }

// Handler answers the requests of one webhook group.
func (e *Engine) Handler(g *policy.Group) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req *admission.Request) admission.Response {
		return e.Review(ctx, g, req)
	})
}

// Review decides a request sent to a group's webhook.
func (e *Engine) Review(_ context.Context, g *policy.Group, req *admission.Request) admission.Response {
	if e.excluded.Has(req.Namespace) || req.SubResource != "" {
		return admission.Allowed()
	}
	switch g.Action {
	case policy.ActionMutate:
		return e.mutate(g, req)
	default:
		return e.validate(g, req)
	}
}

// matching returns the group's policies that concern the request.
func matching(g *policy.Group, req *admission.Request, labels, oldLabels map[string]string) []*policy.Policy {
	t := policy.Target{
		Resource:    req.Resource.GroupResource(),
		SubResource: req.SubResource,
		Operation:   string(req.Operation),
		Namespace:   req.Namespace,
		Labels:      labels,
		OldLabels:   oldLabels,
	}
	var out []*policy.Policy
	for _, p := range g.Policies {
		if p.Matches(&t) {
			out = append(out, p)
		}
	}
	return out
}

func names(ps []*policy.Policy) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name()
	}
	return out
}
