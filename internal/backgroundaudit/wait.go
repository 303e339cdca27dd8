package backgroundaudit

// Waiting for the informers to read their objects and for the workers to
// evaluate what is queued.

import (
	"context"
	"time"
)

// waitUntil polls done until it is true or ctx ends.
func waitUntil(ctx context.Context, done func() bool) error {
	for !done() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// settle waits until every informer has read its objects or failed to.
func (a *auditor) settle(ctx context.Context) error {
	for {
		pending := 0
		a.mu.Lock()
		for _, w := range a.watching {
			ok, err := w.settled()
			if !ok {
				pending++
			} else if err == nil {
				a.cfg.Metrics.BackgroundAuditUnreadable(w.resource.GVR.GroupResource().String(), false)
			}
		}
		a.mu.Unlock()
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// drain waits until every queued object has been evaluated.
func (a *auditor) drain(ctx context.Context) error {
	for a.objects.Len() > 0 || a.inflight.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
