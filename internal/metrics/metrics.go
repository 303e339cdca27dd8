// Package metrics exposes tollgate's Prometheus metrics. It observes reviews
// from the transport (it is a webhook.Observer, without knowing the
// transport) rather than living inside the policy code, and serves them on a
// listener of their own.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/version"
)

// Metrics holds tollgate's collectors in a registry of its own.
type Metrics struct {
	Registry   *prometheus.Registry
	reviews    *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	policies   *prometheus.CounterVec
	warnings   *prometheus.CounterVec
	exceptions *prometheus.CounterVec
	injections *prometheus.CounterVec
	panics     prometheus.Counter
	certExpiry *prometheus.GaugeVec
	reloads    *prometheus.CounterVec
	leader     prometheus.Gauge
	audit      auditMetrics
	images     imageMetrics
}

// New registers every collector, Go runtime and process ones included.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		reviews: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_reviews_total", Help: "Admission reviews answered, by path, decision (allowed, patched, denied) and status code.",
		}, []string{"path", "decision", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tollgate_review_duration_seconds", Help: "Time from reading a review to writing its answer.",
			// 25µs to about 3.3s: fine enough below a millisecond, where tollgate should be.
			Buckets: prometheus.ExponentialBuckets(25e-6, 2, 18),
		}, []string{"path"}),
		policies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_policy_decisions_total", Help: "Policies that acted on a review, by policy and decision.",
		}, []string{"policy", "decision"}),
		warnings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_policy_warnings_total", Help: "Warn and Audit verdicts, by policy: what a policy would refuse once enforced.",
		}, []string{"policy"}),
		exceptions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_policy_exceptions_used_total", Help: "Policies lifted for a review by a PolicyException, by policy and exception.",
		}, []string{"policy", "exception"}),
		injections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_injections_total", Help: "Pods injected, by policy.",
		}, []string{"policy"}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tollgate_panics_total", Help: "Panics recovered while deciding a review.",
		}),
		certExpiry: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tollgate_certificate_expiry_timestamp_seconds", Help: "When the certificate expires (Unix time).",
		}, []string{"certificate"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_policy_loads_total", Help: "Policy set loads, by result (success, failure).",
		}, []string{"result"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tollgate_leader", Help: "1 while this replica leads.",
		}),
	}
	v := version.Get()
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tollgate_build_info", Help: "Always 1; its labels say which build of tollgate this replica runs (tollgate version).",
	}, []string{"version", "revision", "goversion", "platform"})
	build.WithLabelValues(v.Version, v.Revision, v.GoVersion, v.Platform).Set(1)
	m.audit = newAuditMetrics()
	m.audit.register(m.Registry)
	m.images = newImageMetrics()
	m.images.register(m.Registry)
	m.Registry.MustRegister(build, m.reviews, m.latency, m.policies, m.warnings, m.exceptions, m.injections, m.panics, m.certExpiry, m.reloads, m.leader,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Observe records one review: its path, answer, duration and whether the
// handler panicked. It makes Metrics a webhook.Observer.
func (m *Metrics) Observe(path string, resp admission.Response, took time.Duration, panicked bool) {
	if panicked {
		m.panics.Inc()
	}
	code := resp.Code
	if code == 0 {
		code = http.StatusOK
	}
	decision := resp.Decision()
	m.reviews.WithLabelValues(path, decision, strconv.Itoa(int(code))).Inc()
	m.latency.WithLabelValues(path).Observe(took.Seconds())
	for _, p := range resp.Warned {
		m.warnings.WithLabelValues(p).Inc()
	}
	for _, x := range resp.Exempted {
		m.exceptions.WithLabelValues(x.Policy, x.Exception).Inc()
	}
	for _, p := range resp.Policies {
		m.policies.WithLabelValues(p, decision).Inc()
		if decision == "patched" {
			m.injections.WithLabelValues(p).Inc()
		}
	}
}

// CertificateExpiry sets the expiry of a named certificate.
func (m *Metrics) CertificateExpiry(name string, notAfter time.Time) {
	m.certExpiry.WithLabelValues(name).Set(float64(notAfter.Unix()))
}

// PolicyLoad counts a policy load.
func (m *Metrics) PolicyLoad(err error) {
	if err != nil {
		m.reloads.WithLabelValues("failure").Inc()
		return
	}
	m.reloads.WithLabelValues("success").Inc()
}

// Leading sets whether this replica leads.
func (m *Metrics) Leading(yes bool) {
	if yes {
		m.leader.Set(1)
	} else {
		m.leader.Set(0)
	}
}

// Handler answers GET /metrics, and with profiling Go's profiles under
// /debug/pprof/ (profiling.go).
func (m *Metrics) Handler(profiling bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	if profiling {
		serveProfiles(mux)
	}
	return mux
}

// Serve serves Handler(profiling) on addr over plain HTTP until ctx ends.
func (m *Metrics) Serve(ctx context.Context, addr string, profiling bool, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: m.Handler(profiling), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("serving metrics", slog.String("address", ln.Addr().String()))
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
