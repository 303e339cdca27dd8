package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// imageMetrics are image verification's: images checked, and the calls
// to registries they needed. Metrics is an imageverify.Observer.
type imageMetrics struct {
	verifications *prometheus.CounterVec
	registry      *prometheus.HistogramVec
}

func newImageMetrics() imageMetrics {
	return imageMetrics{
		verifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_image_verifications_total", Help: "Images checked by verifyImages policies, by result (verified, refused, error) and whether the cache answered.",
		}, []string{"result", "cached"}),
		registry: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tollgate_registry_request_duration_seconds", Help: "Rounds with registries for image verification, by operation (resolve, signatures) and outcome (ok, error).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14), // 1ms to about 8s
		}, []string{"op", "outcome"}),
	}
}

func (i imageMetrics) register(r *prometheus.Registry) {
	r.MustRegister(i.verifications, i.registry)
}

// ImageVerified counts one image checked.
func (m *Metrics) ImageVerified(result string, cached bool) {
	c := "false"
	if cached {
		c = "true"
	}
	m.images.verifications.WithLabelValues(result, c).Inc()
}

// RegistryCall observes one round with a registry.
func (m *Metrics) RegistryCall(op string, took time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.images.registry.WithLabelValues(op, outcome).Observe(took.Seconds())
}
