package cli

import (
	"sync/atomic"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// policies is the serving replica's current policy set, replaced whole on
// reload, with a channel that tells registration to apply again.
type policies struct {
	set  atomic.Pointer[policy.Set]
	kick chan struct{}
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
}

// poke asks registration to apply again; a pending request is enough.
func (p *policies) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}
