package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tollgate-dev/tollgate/internal/imageverify"
)

var _ imageverify.Observer = (*Metrics)(nil)

func TestImageMetrics(t *testing.T) {
	m := New()
	m.ImageVerified("verified", false)
	m.ImageVerified("verified", true)
	m.ImageVerified("verified", true)
	m.ImageVerified("error", false)
	m.RegistryCall("resolve", 3*time.Millisecond, nil)
	m.RegistryCall("signatures", 2*time.Second, errors.New("connection refused"))
	want := `
# HELP tollgate_image_verifications_total Images checked by verifyImages policies, by result (verified, refused, error) and whether the cache answered.
# TYPE tollgate_image_verifications_total counter
tollgate_image_verifications_total{cached="false",result="error"} 1
tollgate_image_verifications_total{cached="false",result="verified"} 1
tollgate_image_verifications_total{cached="true",result="verified"} 2
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "tollgate_image_verifications_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.images.registry); n != 2 {
		t.Errorf("registry histograms: %d series, want 2 (resolve ok, signatures error)", n)
	}
}
