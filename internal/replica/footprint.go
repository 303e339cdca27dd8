package replica

import (
	"log/slog"

	"github.com/tollgate-dev/tollgate/internal/footprint"
)

// releaseStartup gives back, once everything has started, what start-up
// alone needed (footprint.Release). A failure costs only memory: it is
// logged, and the replica serves on.
func (r *replica) releaseStartup() {
	released, err := footprint.Release()
	if err != nil {
		r.log.Warn("could not release start-up memory", slog.Any("error", err))
		return
	}
	r.log.Debug("released start-up memory", slog.Int64("executableBytes", released))
}
