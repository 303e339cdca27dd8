package deploy

import (
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"github.com/tollgate-dev/tollgate/internal/metrics"
)

const (
	dashboard = root + "/deploy/monitoring/tollgate-dashboard.json"
	rules     = root + "/deploy/monitoring/prometheusrule.yaml"
)

// external are the metrics the alerts read from elsewhere: kube-state-metrics.
var external = map[string]bool{
	"kube_deployment_spec_replicas":             true,
	"kube_deployment_status_replicas_available": true,
}

var (
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true}
	leMatcher = regexp.MustCompile(`\ble\s*=\s*"([^"]*)"`)
)

// metricNames returns the metric names a PromQL expression selects: the
// identifiers left once strings, ranges, label matchers and grouping clauses
// are gone that are neither keywords nor function calls.
func metricNames(expr string) []string {
	e := promStrings.ReplaceAllString(expr, `""`)
	e = promRanges.ReplaceAllString(e, " ")
	e = promMatchers.ReplaceAllString(e, " ")
	e = promGrouping.ReplaceAllString(e, " ")
	var names []string
	for _, loc := range promIdent.FindAllStringIndex(e, -1) {
		name := e[loc[0]:loc[1]]
		if loc[0] > 0 && strings.ContainsAny(e[loc[0]-1:loc[0]], "0123456789.$") {
			continue // 1e3, or a Grafana variable
		}
		if promKeywords[strings.ToLower(name)] || strings.HasPrefix(strings.TrimLeft(e[loc[1]:], " \t\n"), "(") {
			continue
		}
		names = append(names, name)
	}
	return names
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string]string{
		`histogram_quantile(0.99, sum by (le, path) (rate(tollgate_review_duration_seconds_bucket{job=~"$job", le="1"}[$__rate_interval]))) > 0.1`: "tollgate_review_duration_seconds_bucket",
		`sum(tollgate_leader{job="tollgate"}) < 1 or absent(go_goroutines)`:                                                                        "tollgate_leader go_goroutines",
		`a - on (pod) group_left(x) b offset 5m > 1e3`:                                                                                             "a b",
		`min by (certificate) (x) - time() < 7 * 24 * 3600`:                                                                                        "x",
	} {
		if got := strings.Join(metricNames(expr), " "); got != want {
			t.Errorf("metricNames(%s) = %q, want %q", expr, got, want)
		}
	}
}

// dashboardExprs returns the PromQL of every panel target and every
// templating query of the Grafana dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	var d any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboard, err)
	}
	var exprs []string
	labelValues := regexp.MustCompile(`^label_values\((.*),\s*[a-zA-Z_]+\)$`)
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(e, k)
			}
		case []any:
			for _, e := range v {
				walk(e, key)
			}
		case string:
			switch {
			case key == "expr":
				exprs = append(exprs, v)
			case key == "query" || key == "definition":
				if m := labelValues.FindStringSubmatch(v); m != nil {
					exprs = append(exprs, m[1])
				}
			}
		}
	}
	walk(d, "")
	return exprs
}

func ruleExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Kind string
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert, Record, Expr string
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", rules, err)
	}
	var exprs []string
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			if rule.Expr == "" {
				t.Errorf("%s: rule %s%s has no expr", rules, rule.Alert, rule.Record)
			}
			exprs = append(exprs, rule.Expr)
		}
	}
	return exprs
}

// exported returns what tollgate's /metrics serves, as `tollgate serve`
// builds it (metrics.New), after every kind of observation so that labelled
// series exist, and the metric names in it (a histogram's as _bucket, _sum
// and _count).
func exported(t *testing.T) (string, map[string]bool) {
	t.Helper()
	m := metrics.New()
	deny := admission.Denied("no")
	deny.Policies = []string{"require-environment"}
	m.Observe("/validate/require-environment", deny, time.Millisecond, false)
	patch := admission.Response{Allowed: true, Patch: jsonpatch.Patch{jsonpatch.Add("/x", []byte("1"))}, Policies: []string{"nginx-sidecar"}}
	m.Observe("/mutate", patch, time.Millisecond, true)
	m.Observe("/validate/library", admission.Response{Allowed: true, Warned: []string{"require-probes"}}, time.Millisecond, false)
	m.Observe("/validate/library", admission.Response{Allowed: true, Exempted: []admission.Exemption{{Policy: "no-privileged", Exception: "cni-agent"}}}, time.Millisecond, false)
	m.CertificateExpiry("serving", time.Now())
	m.PolicyLoad(nil)
	m.PolicyLoad(errors.New("bad policy"))
	m.Leading(true)

	srv := httptest.NewServer(promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	sample := regexp.MustCompile(`(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]`)
	for _, s := range sample.FindAllStringSubmatch(string(body), -1) {
		names[s[1]] = true
	}
	return string(body), names
}

// Every metric the dashboard and the alerts use is one tollgate exports: a
// renamed metric fails here rather than leaving a panel empty or an alert
// silent.
func TestDashboardAndAlertsUseExportedMetrics(t *testing.T) {
	text, names := exported(t)
	for _, n := range []string{"tollgate_reviews_total", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		if !names[n] {
			t.Fatalf("tollgate does not export %s; the exposition:\n%s", n, text)
		}
	}
	for source, exprs := range map[string][]string{dashboard: dashboardExprs(t), rules: ruleExprs(t)} {
		if len(exprs) < 6 {
			t.Errorf("%s: only %d expressions found", source, len(exprs))
		}
		used := map[string]bool{}
		for _, e := range exprs {
			ns := metricNames(e)
			if len(ns) == 0 {
				t.Errorf("%s: no metric in %q", source, e)
			}
			for _, n := range ns {
				used[n] = true
				if !names[n] && !external[n] {
					t.Errorf("%s: %s is not exported by tollgate (in %q)", source, n, e)
				}
			}
			// A bucket boundary in an le matcher must be one of the histogram's.
			for _, le := range leMatcher.FindAllStringSubmatch(e, -1) {
				if !strings.Contains(text, `le="`+le[1]+`"`) {
					t.Errorf("%s: no bucket le=%q (in %q)", source, le[1], e)
				}
			}
		}
		var list []string
		for n := range used {
			list = append(list, n)
		}
		sort.Strings(list)
		t.Logf("%s uses %s", source, strings.Join(list, ", "))
	}
}
