package exception

import (
	"errors"
	"fmt"
	"time"
)

// Clock tells the time. Exceptions expire by it; tests set it.
type Clock func() time.Time

// Index answers which exceptions exempt an object from a policy, now.
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

// Exemption is what the exceptions in force lift of one policy for one
// object: the whole policy, or some of its rules.
type Exemption struct {
	// Whole is the first exception, in load order, that lifts the policy
	// entirely; nil if none does.
	Whole *Exception
	// Rules are the exempt rules, each with the first exception lifting it,
	// when no exception lifts the whole policy.
	Rules map[string]*Exception
}

// None tells whether nothing is lifted.
func (x Exemption) None() bool { return x.Whole == nil && len(x.Rules) == 0 }

// Find returns what the exceptions in force lift of policy for obj. An
// expired exception is applied nowhere.
func (ix *Index) Find(policy string, obj Object) Exemption {
	var x Exemption
	if ix == nil {
		return x
	}
	candidates := ix.byPolicy[policy]
	if len(candidates) == 0 {
		return x
	}
	now := ix.now()
	for _, e := range candidates {
		if !e.Active(now) || !e.Exempts(policy, obj) {
			continue
		}
		if len(e.Spec.Rules) == 0 {
			return Exemption{Whole: e}
		}
		for _, r := range e.Spec.Rules {
			if x.Rules == nil {
				x.Rules = map[string]*Exception{}
			}
			if _, ok := x.Rules[r]; !ok {
				x.Rules[r] = e
			}
		}
	}
	return x
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
		key := e.Name()
		if e.Kyverno != nil { // namespaced, of another group
			key = KyvernoGroup + ":" + e.Kyverno.Key(e.Name())
		}
		if prev, ok := first[key]; ok {
			errs = append(errs, fmt.Errorf("%s: metadata.name: duplicate exception name %q, first defined in %s", e.Source, e.Name(), prev.Source))
			continue
		}
		first[key] = e
	}
	return errors.Join(errs...)
}

// Names tells whether any exception, expired or not, names policy: when
// none does, the engine need not look at the object.
func (ix *Index) Names(policy string) bool { return ix != nil && len(ix.byPolicy[policy]) > 0 }

// Now is the index's time, by which exceptions expire.
func (ix *Index) Now() time.Time {
	if ix == nil {
		return time.Now()
	}
	return ix.now()
}
