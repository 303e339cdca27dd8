package engine

import (
	"context"
	"fmt"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// A kind is how the engine runs one type of group. Each has its own file:
// validate.go, mutate.go, inject.go, images.go, validatingpolicy.go, mutatingpolicy.go, gatekeeper.go.
type kind struct {
	// run decides a request for a group of this kind. stored is true for
	// an object read from the cluster (audit), not a request.
	run func(e *Engine, ctx context.Context, g *policy.Group, req *admission.Request, stored bool) Evaluation
	// subresources is true when the kind's own rules say which
	// subresources it checks. Otherwise it checks none.
	subresources bool
}

// kinds is every type of group the engine runs. A group of a type not here
// errs: it is never allowed unchecked.
var kinds = map[policy.GroupType]kind{
	policy.GroupValidating: {run: func(e *Engine, ctx context.Context, g *policy.Group, req *admission.Request, _ bool) Evaluation {
		return e.validate(ctx, g, req)
	}},
	policy.GroupMutating: {run: func(e *Engine, ctx context.Context, g *policy.Group, req *admission.Request, _ bool) Evaluation {
		return e.mutate(ctx, g, req)
	}},
	policy.GroupInjection: {run: func(e *Engine, _ context.Context, g *policy.Group, req *admission.Request, _ bool) Evaluation {
		return e.inject(g, req)
	}},
	policy.GroupVAP:        {subresources: true, run: (*Engine).validateVAP},
	policy.GroupGatekeeper: {run: (*Engine).validateGatekeeper},
	policy.GroupImages: {run: func(e *Engine, ctx context.Context, g *policy.Group, req *admission.Request, _ bool) Evaluation {
		return e.verifyImages(ctx, g, req)
	}},
	policy.GroupMAP: {subresources: true, run: func(e *Engine, ctx context.Context, g *policy.Group, req *admission.Request, _ bool) Evaluation {
		return e.mutateMAP(ctx, g, req)
	}},
}

// kindOf is the runner for g, or an error naming its type.
func kindOf(g *policy.Group) (kind, error) {
	k, ok := kinds[g.Kind]
	if !ok || k.run == nil {
		return kind{}, fmt.Errorf("group %q: tollgate cannot run policies of type %q", g.ID, g.Kind)
	}
	return k, nil
}
