package metrics

import (
	"net/http"
	"net/http/pprof"
	"time"
)

// profileTimeout is how long a profile may take to write: a CPU profile
// or trace runs for its ?seconds= (30 by default), past the listener's
// 10 s write timeout.
const profileTimeout = 2 * time.Minute

// serveProfiles adds Go's profiles (net/http/pprof) to mux, as
// Kubernetes' components serve them with --profiling: /debug/pprof/ and
// its heap, goroutine, allocs, profile (CPU) and trace. They say what the
// process holds and spends, so the listener that serves them must not be
// reachable beyond those who may know that.
func serveProfiles(mux *http.ServeMux) {
	long := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			// The server's write timeout would cut the profile short.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(profileTimeout))
			h(w, r)
		}
	}
	mux.HandleFunc("GET /debug/pprof/", long(pprof.Index))
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", long(pprof.Profile))
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", long(pprof.Trace))
}
