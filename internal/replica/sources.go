package replica

import (
	"context"

	"github.com/tollgate-dev/tollgate/internal/authz"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/params"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/references"
)

// sources gives policies their params, authorizer and referenced objects.
// With cluster access: informers of the param kinds and of the referenced
// kinds in use (kept in step with reloads by follow, /readyz waiting for
// them) and SubjectAccessReviews, and Gatekeeper's inventory (gatekeeper.go).
// Without: the param and RBAC objects found with the policies, read again
// on each reload (referenced kinds are then unavailable, naming why).
type sources struct {
	ctx   context.Context
	store *params.Store
	refs  *references.Cluster
	base  external.Sources
	// stop ends the informers of the previous offline set's params.
	stop context.CancelFunc
	gk   *gatekeeperSync
}

func (r *replica) newExternal(ctx context.Context, cl *cluster) (*sources, error) {
	e := &sources{ctx: ctx}
	if cl == nil {
		return e, nil
	}
	store, err := params.NewCluster(ctx, cl.config)
	if err != nil {
		return nil, err
	}
	a, err := authz.NewCluster(cl.client)
	if err != nil {
		return nil, err
	}
	refs := references.New()
	if e.refs, err = references.NewCluster(ctx, cl.config, refs); err != nil {
		return nil, err
	}
	if e.gk, err = newGatekeeperSync(cl.config); err != nil {
		return nil, err
	}
	e.store = store
	e.base = external.Sources{Params: store, Authorizer: a, References: refs}
	cl.readyChecks = append(cl.readyChecks, store.Synced, e.refs.Synced, e.gk.synced)
	return e, nil
}

// follow returns the Sources for a (re)loaded set.
func (e *sources) follow(s *policy.Set) (external.Sources, error) {
	if e.store != nil {
		e.store.Use(s.ParamKinds())
		e.base.References.Use(s.References())
		e.refs.Follow()
		e.gk.follow(e.ctx, s)
		return e.base, nil
	}
	ctx, stop := context.WithCancel(e.ctx)
	ext, err := offline.External(ctx, s, nil)
	if err != nil {
		stop()
		return ext, err
	}
	if e.stop != nil {
		e.stop()
	}
	e.stop = stop
	return ext, nil
}
