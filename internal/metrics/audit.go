package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// auditMetrics are the background audit's: report writes, results held,
// how long a full evaluation takes, resources it cannot read.
type auditMetrics struct {
	writes     *prometheus.CounterVec
	results    *prometheus.GaugeVec
	scan       prometheus.Histogram
	unreadable *prometheus.GaugeVec
}

func newAuditMetrics() auditMetrics {
	return auditMetrics{
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_background_audit_report_writes_total", Help: "Report writes of the background audit, by operation (create, update, delete).",
		}, []string{"op"}),
		results: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tollgate_background_audit_results", Help: "Results in the background audit's reports, by result (pass, fail, warn, error, skip).",
		}, []string{"result"}),
		scan: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "tollgate_background_audit_scan_duration_seconds", Help: "Time to evaluate every audited object: at start, on leading, on each policy reload.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 16),
		}),
		unreadable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tollgate_background_audit_unreadable_resources", Help: "1 for each resource the policies match that tollgate cannot list or watch: its objects are missing from the reports.",
		}, []string{"resource"}),
	}
}

func (a auditMetrics) register(r *prometheus.Registry) {
	r.MustRegister(a.writes, a.results, a.scan, a.unreadable)
}

// BackgroundAuditWrite counts one report write (create, update, delete).
func (m *Metrics) BackgroundAuditWrite(op string) { m.audit.writes.WithLabelValues(op).Inc() }

// BackgroundAuditResults sets the results held, by result.
func (m *Metrics) BackgroundAuditResults(byResult map[string]int) {
	for _, r := range []string{"pass", "fail", "warn", "error", "skip"} {
		m.audit.results.WithLabelValues(r).Set(float64(byResult[r]))
	}
}

// BackgroundAuditScan observes one full evaluation.
func (m *Metrics) BackgroundAuditScan(took time.Duration) { m.audit.scan.Observe(took.Seconds()) }

// BackgroundAuditUnreadable sets whether a resource cannot be listed or watched.
func (m *Metrics) BackgroundAuditUnreadable(resource string, unreadable bool) {
	v := 0.0
	if unreadable {
		v = 1
	}
	m.audit.unreadable.WithLabelValues(resource).Set(v)
}
