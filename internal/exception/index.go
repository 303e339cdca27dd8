package exception

import (
	"errors"
	"fmt"
	"time"
)

// Clock tells the time. Exceptions expire by it; tests set it.
type Clock func() time.Time

// Index answers which exception exempts an object from a policy, now.
type Index struct {
	byPolicy map[string][]*Exception
	now      Clock
}

// NewIndex indexes exceptions by policy. A nil clock is the system's.
func NewIndex(list []*Exception, now Clock) *Index {
	if now == nil {
		now = time.Now
	}
	ix := &Index{byPolicy: map[string][]*Exception{}, now: now}
	for _, e := range list {
		for _, p := range e.Spec.Policies {
			ix.byPolicy[p] = append(ix.byPolicy[p], e)
		}
	}
	return ix
}

// Find returns the first exception, in load order, that exempts obj from
// policy and has not expired; nil if there is none. An expired exception
// is applied nowhere.
func (ix *Index) Find(policy string, obj Object) *Exception {
	if ix == nil {
		return nil
	}
	candidates := ix.byPolicy[policy]
	if len(candidates) == 0 {
		return nil
	}
	now := ix.now()
	for _, e := range candidates {
		if e.Active(now) && e.Exempts(policy, obj) {
			return e
		}
	}
	return nil
}

// Active tells whether the exception applies at t: it has no expiry, or t
// is before it.
func (e *Exception) Active(t time.Time) bool {
	return e.Spec.ExpiresAt == nil || t.Before(e.Spec.ExpiresAt.Time)
}

// Unique refuses two exceptions of the same name.
func Unique(list []*Exception) error {
	first := map[string]*Exception{}
	var errs []error
	for _, e := range list {
		if prev, ok := first[e.Name()]; ok {
			errs = append(errs, fmt.Errorf("%s: metadata.name: duplicate exception name %q, first defined in %s", e.Source, e.Name(), prev.Source))
			continue
		}
		first[e.Name()] = e
	}
	return errors.Join(errs...)
}

// Names tells whether any exception, expired or not, names policy: when
// none does, the engine need not look at the object.
func (ix *Index) Names(policy string) bool { return ix != nil && len(ix.byPolicy[policy]) > 0 }
