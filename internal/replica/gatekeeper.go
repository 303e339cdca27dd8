package replica

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/internal/gatekeeper"
	"github.com/tollgate-dev/tollgate/internal/kubeclient"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// gatekeeperSyncWait bounds how long a reload waits for the new set's
// inventory before it is served anyway (its referential Constraints then
// give errors, and /readyz says why, until it has synced).
const gatekeeperSyncWait = 30 * time.Second

// gatekeeperSync keeps the data.inventory of the set's Gatekeeper
// evaluator filled from the cluster. Each set has its own evaluator, so a
// reload syncs the new one before it is served, and then stops the old.
type gatekeeperSync struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper

	mu      sync.Mutex
	current *gatekeeper.Sync
	stop    context.CancelFunc
}

func newGatekeeperSync(cfg *rest.Config) (*gatekeeperSync, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := kubeclient.Mapper(cfg)
	if err != nil {
		return nil, err
	}
	return &gatekeeperSync{dyn: dyn, mapper: mapper}, nil
}

// follow starts the sync of a (re)loaded set's evaluator, waits for it
// (at most gatekeeperSyncWait), and stops the previous set's.
func (g *gatekeeperSync) follow(ctx context.Context, s *policy.Set) {
	var next *gatekeeper.Sync
	var stop context.CancelFunc
	if e := s.GatekeeperEvaluator(); e != nil && e.NeedsInventory() {
		var sctx context.Context
		sctx, stop = context.WithCancel(ctx)
		next = gatekeeper.StartSync(sctx, e, g.dyn, g.mapper)
		for deadline := time.Now().Add(gatekeeperSyncWait); next.Synced() != nil && time.Now().Before(deadline) && ctx.Err() == nil; {
			time.Sleep(50 * time.Millisecond)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stop != nil {
		g.stop()
	}
	g.current, g.stop = next, stop
}

// synced is the readiness check: nil unless the served set's inventory
// has not synced.
func (g *gatekeeperSync) synced() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.current == nil {
		return nil
	}
	return g.current.Synced()
}
