package replica

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/server"
)

// policies is the replica's current policy set, replaced whole on reload,
// with a channel that tells registration to apply again, and those of
// whoever else follows reloads.
type policies struct {
	set  atomic.Pointer[policy.Set]
	kick chan struct{}

	mu       sync.Mutex
	watchers []chan struct{}
}

func newPolicies(s *policy.Set) *policies {
	p := &policies{kick: make(chan struct{}, 1)}
	p.set.Store(s)
	return p
}

func (p *policies) current() *policy.Set { return p.set.Load() }

func (p *policies) replace(s *policy.Set) {
	p.set.Store(s)
	p.poke()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.watchers {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// changes tells of each replacement; a pending one is enough.
func (p *policies) changes() <-chan struct{} {
	c := make(chan struct{}, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watchers = append(p.watchers, c)
	return c
}

// poke asks registration to apply again; a pending request is enough.
func (p *policies) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// watchPolicies reloads Config.Policies until ctx ends: a changed, valid
// set replaces the current one, in the server's routes and for
// registration; an invalid one is logged and the previous set serves on.
func (r *replica) watchPolicies(ctx context.Context, srv *server.Server, opts engine.Options, ext *sources) {
	if r.cfg.Policies == "" || r.cfg.PolicyReloadInterval <= 0 {
		return
	}
	w := &policy.Watcher{Path: r.cfg.Policies, Interval: r.cfg.PolicyReloadInterval, Loaded: r.loaded,
		OnLoad: func(s *policy.Set) {
			var err error
			if opts.External, err = ext.follow(s); err != nil {
				r.met.PolicyLoad(err)
				r.log.Error("policies not reloaded; the previous set keeps serving", slog.Any("error", err))
				return
			}
			r.met.PolicyLoad(nil)
			r.policies.replace(s)
			srv.SetRoutes(Routes(engine.New(s, opts)))
			r.log.Info("policies reloaded", slog.Any("policies", s.Names()))
		},
		OnError: func(err error) {
			r.met.PolicyLoad(err)
			r.log.Error("policies not reloaded; the previous set keeps serving", slog.Any("error", err))
		},
	}
	r.group.Go(func() error { w.Run(ctx); return nil })
}

// sourceName is how the log names where policies came from.
func sourceName(path string) string {
	if path == "" {
		return policy.DefaultsFile
	}
	return path
}
