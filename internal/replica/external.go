package replica

import (
	"context"

	"github.com/tollgate-dev/tollgate/internal/authz"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/params"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/vap"
)

// external gives policies their params and authorizer. With cluster
// access: informers of the param kinds in use (kept in step with reloads
// by follow, /readyz waiting for them) and SubjectAccessReviews. Without:
// the param and RBAC objects found with the policies, read again on each
// reload.
type external struct {
	ctx   context.Context
	store *params.Store
	base  vap.External
	// stop ends the informers of the previous offline set's params.
	stop context.CancelFunc
}

func (r *replica) newExternal(ctx context.Context, cl *cluster) (*external, error) {
	e := &external{ctx: ctx}
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
	e.store = store
	e.base = vap.External{Params: store, Authorizer: a}
	cl.readyChecks = append(cl.readyChecks, store.Synced)
	return e, nil
}

// follow returns the External for a (re)loaded set.
func (e *external) follow(s *policy.Set) (vap.External, error) {
	if e.store != nil {
		e.store.Use(s.ParamKinds())
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
