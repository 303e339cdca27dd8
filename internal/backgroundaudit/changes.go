package backgroundaudit

import (
	"time"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/exception"
	"github.com/tollgate-dev/tollgate/internal/offline"
)

// reported keeps the results a report shows: those of the policies that
// apply to the object (engine.Result.Applies), pass, fail, warn, error, and
// the skips that say something about it (an exception, a verdict that
// depends on the request); not the policies that do not apply to it at all
// (not matched, no binding selecting it, match conditions false, system
// namespaces). ok is false when none is left.
func reported(f offline.Finding) (offline.Finding, bool) {
	var keep []engine.Result
	for _, r := range f.Results {
		if r.Applies() {
			keep = append(keep, r)
		}
	}
	f.Results = keep
	return f, len(keep) > 0 || f.Err != nil
}

// nextExpiry is the earliest expiresAt after now among the exceptions, and
// whether there is one.
func nextExpiry(exceptions []*exception.Exception, now time.Time) (time.Time, bool) {
	var next time.Time
	for _, e := range exceptions {
		if at := e.Spec.ExpiresAt; at != nil && at.After(now) && (next.IsZero() || at.Time.Before(next)) {
			next = at.Time
		}
	}
	return next, !next.IsZero()
}

// expired names the exceptions whose expiresAt has passed at now.
func expired(exceptions []*exception.Exception, now time.Time) map[string]bool {
	out := map[string]bool{}
	for _, e := range exceptions {
		if !e.Active(now) {
			out[e.Name()] = true
		}
	}
	return out
}

// kyvernoExpiredBetween tells whether a Kyverno PolicyException expired
// after from and by to. Its allowedValues and images change results that
// name no exception, so the objects it changed cannot be found from them.
func kyvernoExpiredBetween(exceptions []*exception.Exception, from, to time.Time) bool {
	for _, e := range exceptions {
		if at := e.Spec.ExpiresAt; e.Kyverno != nil && at != nil && at.After(from) && !at.After(to) {
			return true
		}
	}
	return false
}
