package metrics

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"github.com/tollgate-dev/tollgate/internal/version"
)

func TestObserve(t *testing.T) {
	m := New()
	patched := admission.Patched(jsonpatch.Patch{jsonpatch.Add("/a", []byte(`1`))})
	patched.Policies = []string{"nginx-sidecar"}
	denied := admission.Denied("no")
	denied.Policies = []string{"require-environment"}
	m.Observe("/mutate/nginx-sidecar", patched, 80*time.Microsecond, false)
	m.Observe("/validate/require-environment", denied, 3*time.Millisecond, false)
	m.Observe("/validate/require-environment", admission.Errored(errors.New("boom")), 0, true)
	warned := admission.Allowed()
	warned.Warned = []string{"require-probes", "require-pinned-images"}
	m.Observe("/validate/library", warned, time.Millisecond, false)
	m.Observe("/validate/library", admission.Response{Allowed: true, Warned: []string{"require-probes"}}, time.Millisecond, false)
	want := `
# HELP tollgate_reviews_total Admission reviews answered, by path, decision (allowed, patched, denied) and status code.
# TYPE tollgate_reviews_total counter
tollgate_reviews_total{code="200",decision="allowed",path="/validate/library"} 2
tollgate_reviews_total{code="200",decision="patched",path="/mutate/nginx-sidecar"} 1
tollgate_reviews_total{code="403",decision="denied",path="/validate/require-environment"} 1
tollgate_reviews_total{code="500",decision="denied",path="/validate/require-environment"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "tollgate_reviews_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.injections.WithLabelValues("nginx-sidecar")); got != 1 {
		t.Errorf("injections = %v", got)
	}
	if got := testutil.ToFloat64(m.warnings.WithLabelValues("require-probes")); got != 2 {
		t.Errorf("warnings of require-probes = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.warnings.WithLabelValues("require-pinned-images")); got != 1 {
		t.Errorf("warnings of require-pinned-images = %v, want 1", got)
	}
	exempt := admission.Allowed()
	exempt.Exempted = []admission.Exemption{{Policy: "no-privileged", Exception: "cni-agent"}}
	m.Observe("/validate/library", exempt, time.Millisecond, false)
	m.Observe("/validate/library", exempt, time.Millisecond, false)
	if got := testutil.ToFloat64(m.exceptions.WithLabelValues("no-privileged", "cni-agent")); got != 2 {
		t.Errorf("exceptions used = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.panics); got != 1 {
		t.Errorf("panics = %v", got)
	}
	// One latency series per path.
	if n, err := testutil.GatherAndCount(m.Registry, "tollgate_review_duration_seconds"); err != nil || n != 3 {
		t.Errorf("latency series %d %v", n, err)
	}
}

func TestBuildInfo(t *testing.T) {
	m := New()
	v := version.Get()
	want := fmt.Sprintf(`
# HELP tollgate_build_info Always 1; its labels say which build of tollgate this replica runs (tollgate version).
# TYPE tollgate_build_info gauge
tollgate_build_info{goversion=%q,platform=%q,revision=%q,version=%q} 1
`, v.GoVersion, v.Platform, v.Revision, v.Version)
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "tollgate_build_info"); err != nil {
		t.Error(err)
	}
}
