package policyreport

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/golden"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/report"
)

var (
	deployment = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	pod        = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	t0         = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
)

// object is a stored object of kind gvk in the shape audit.Evaluate gives.
func object(gvk schema.GroupVersionKind, namespace, name string) *manifest.Object {
	js := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q,"namespace":%q,"uid":"uid-%s"}}`, gvk.GroupVersion(), gvk.Kind, name, namespace, name)
	return &manifest.Object{JSON: []byte(js), GVK: gvk, Namespace: namespace, Name: name}
}

func finding(o *manifest.Object, rs ...engine.Result) offline.Finding {
	return offline.Finding{Object: o, Results: rs, Allowed: true}
}

// team's findings, deliberately out of order.
func team() []offline.Finding {
	return []offline.Finding{
		finding(object(pod, "team", "web-1"),
			engine.Result{Policy: "require-team-label", Outcome: engine.Fail, Message: "pods must carry a team label"},
			engine.Result{Policy: "pinned-images", Outcome: engine.Pass}),
		finding(object(deployment, "team", "web"),
			engine.Result{Policy: "require-team-label", Outcome: engine.Pass},
			engine.Result{Policy: "no-privileged", Outcome: engine.Skip, Message: "exempted by exception legacy-web", Exception: "legacy-web"}),
		{Object: object(pod, "team", "broken"), Err: errors.New("Pod team/broken: cannot decode")},
		finding(object(pod, "team", "api-1"),
			engine.Result{Policy: "require-team-label", Outcome: engine.Warn, Message: "add a team label"},
			engine.Result{Policy: "who-asks", Outcome: engine.Error, Message: "params missing"}),
	}
}

func writer(api API, max int) *Writer {
	w := NewWriter(nil, api, Options{MaxResultsPerReport: max})
	w.now = func() time.Time { return t0 }
	return w
}

func marshal(t *testing.T, us []*unstructured.Unstructured) []byte {
	t.Helper()
	js, err := json.MarshalIndent(us, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(js, '\n')
}

// The reports of each API, namespaced and cluster-scoped, as stored.
func TestBuild(t *testing.T) {
	for _, tt := range []struct {
		api       API
		namespace string
		findings  []offline.Finding
		golden    string
	}{
		{OpenReports, "team", team(), "openreports-team.json"},
		{WGPolicy, "team", team(), "wgpolicyk8s-team.json"},
		{OpenReports, "", []offline.Finding{finding(object(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "", "team"),
			engine.Result{Policy: "namespace-owner", Outcome: engine.Fail, Message: "namespaces need an owner"})}, "openreports-cluster.json"},
		{WGPolicy, "", []offline.Finding{finding(object(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "", "team"),
			engine.Result{Policy: "namespace-owner", Outcome: engine.Fail, Message: "namespaces need an owner"})}, "wgpolicyk8s-cluster.json"},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			us, err := writer(tt.api, 0).build(tt.namespace, tt.findings, nil)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.golden), marshal(t, us))
		})
	}
}

// Equal findings in any order make equal reports.
func TestBuildIsDeterministic(t *testing.T) {
	fs := team()
	want, err := writer(OpenReports, 0).build("team", fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		rotated := append(append([]offline.Finding{}, fs[i:]...), fs[:i]...)
		got, err := writer(OpenReports, 0).build("team", rotated, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(marshal(t, got)) != string(marshal(t, want)) {
			t.Errorf("rotated by %d: reports differ", i)
		}
	}
}

// many is n Pods in namespace many, each with one result per policy.
func many(n int, message string, policies ...string) []offline.Finding {
	var fs []offline.Finding
	for i := range n {
		f := finding(object(pod, "many", fmt.Sprintf("pod-%04d", i)))
		for _, p := range policies {
			f.Results = append(f.Results, engine.Result{Policy: p, Outcome: engine.Fail, Message: message})
		}
		fs = append(fs, f)
	}
	return fs
}

// Reports split at the bound of results, or of bytes, into tollgate,
// tollgate-2... with their own summaries.
func TestSplit(t *testing.T) {
	long := strings.Repeat("x", 3000)
	for _, tt := range []struct {
		name     string
		findings []offline.Finding
		max      int
		want     []int // results per report
	}{
		{"none", nil, 10, nil},
		{"under the bound", many(3, "m", "a", "b"), 10, []int{6}},
		{"at the bound", many(5, "m", "a", "b"), 10, []int{10}},
		{"one past", many(11, "m", "a"), 10, []int{10, 1}},
		{"three parts", many(25, "m", "a"), 10, []int{10, 10, 5}},
		{"default bound", many(1500, "m", "a", "b"), 0, []int{1000, 1000, 1000}},
		{"bytes first", many(800, long, "a"), 0, []int{326, 326, 148}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			us, err := writer(OpenReports, tt.max).build("many", tt.findings, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for i, u := range us {
				if want := partName(i); u.GetName() != want {
					t.Errorf("report %d named %s, want %s", i, u.GetName(), want)
				}
				rs, _, _ := unstructured.NestedSlice(u.Object, "results")
				got = append(got, len(rs))
				fail, _, _ := unstructured.NestedInt64(u.Object, "summary", "fail")
				if int(fail) != len(rs) {
					t.Errorf("%s: summary.fail %d, %d results", u.GetName(), fail, len(rs))
				}
				if js, _ := json.Marshal(u); len(js) > maxReportBytes+4096 {
					t.Errorf("%s: %d bytes", u.GetName(), len(js))
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("results per report %v, want %v", got, tt.want)
			}
		})
	}
}

// A result keeps its timestamp while it stays the same, wherever it moves.
func TestTimestamps(t *testing.T) {
	w := writer(OpenReports, 2)
	first, err := w.build("team", team(), nil)
	if err != nil {
		t.Fatal(err)
	}
	previous := map[string]report.Result{}
	for _, u := range first {
		b, err := decode(u)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b.Results {
			previous[resultKey(&r)] = r
		}
	}
	later := t0.Add(time.Hour)
	w.now = func() time.Time { return later }
	fs := team()
	fs[0].Results[0].Outcome = engine.Pass // web-1 fixed
	fs[0].Results[0].Message = ""
	fs = append(fs, finding(object(deployment, "team", "aaa"), engine.Result{Policy: "pinned-images", Outcome: engine.Pass})) // shifts every part
	second, err := w.build("team", fs, previous)
	if err != nil {
		t.Fatal(err)
	}
	stamps := map[string]int64{}
	for _, u := range second {
		b, _ := decode(u)
		for _, r := range b.Results {
			stamps[r.Resources[0].Name+" "+r.Policy] = r.Timestamp.Seconds
		}
	}
	for key, want := range map[string]time.Time{
		"web-1 require-team-label": later, "aaa pinned-images": later,
		"web-1 pinned-images": t0, "web no-privileged": t0, "broken tollgate/manifest": t0, "api-1 who-asks": t0,
	} {
		if stamps[key] != want.Unix() {
			t.Errorf("%s: timestamp %d, want %d", key, stamps[key], want.Unix())
		}
	}
	if len(stamps) != 8 {
		t.Errorf("%d results: %v", len(stamps), stamps)
	}
	// Unchanged findings: every report the same as before.
	again, err := w.build("team", team(), previous)
	if err != nil {
		t.Fatal(err)
	}
	for i := range again {
		if !same(first[i], again[i]) {
			t.Errorf("%s: unchanged findings, changed report", again[i].GetName())
		}
	}
	if same(first[0], second[0]) {
		t.Error("a changed report compares the same")
	}
}

func TestSyncRefusesOtherNamespaces(t *testing.T) {
	_, err := writer(OpenReports, 0).Sync(t.Context(), "other", team())
	if err == nil || !strings.Contains(err.Error(), `namespace "other" cannot hold Pod team/web-1`) {
		t.Errorf("err = %v", err)
	}
}

func TestParseAPI(t *testing.T) {
	for in, want := range map[string]API{"openreports": OpenReports, "wgpolicyk8s": WGPolicy, "": DefaultAPI()} {
		if got, err := ParseAPI(in); err != nil || got != want {
			t.Errorf("ParseAPI(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"policyreport", "OpenReports", "wgpolicyk8s.io/v1alpha2"} {
		_, err := ParseAPI(in)
		if err == nil || !strings.Contains(err.Error(), `"openreports"`) || !strings.Contains(err.Error(), `"wgpolicyk8s"`) {
			t.Errorf("ParseAPI(%q): %v", in, err)
		}
	}
	if DefaultAPI() != OpenReports {
		t.Errorf("default %q", DefaultAPI())
	}
}

// TestResultSize measures a typical result, the figure DefaultMaxResults'
// comment gives.
func TestResultSize(t *testing.T) {
	f := finding(object(deployment, "payments-prod", "checkout-service"),
		engine.Result{Policy: "require-run-as-non-root", Outcome: engine.Fail, Message: "containers must set securityContext.runAsNonRoot: true"})
	f.Object.JSON = []byte(`{"metadata":{"uid":"4f6c1a2e-8a0b-4c51-9b1e-2f3d5a6b7c8d"}}`)
	rs := results([]offline.Finding{f})
	stamp(rs, nil, t0)
	js, err := json.Marshal(rs[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a typical result: %d bytes; %d results: %.2f MiB", len(js), DefaultMaxResults, float64(len(js)*DefaultMaxResults)/(1<<20))
	if len(js) > 500 || len(js)*DefaultMaxResults > maxReportBytes {
		t.Errorf("a typical result is %d bytes: revisit DefaultMaxResults", len(js))
	}
}

// A message is cut, as warnings are, so that no result fills a report.
func TestLongMessage(t *testing.T) {
	rs := results(many(1, strings.Repeat("é", 5000), "a"))
	if m := rs[0].Message; len(m) > maxMessageBytes || !strings.HasSuffix(m, "...") || !strings.HasPrefix(m, "éé") {
		t.Errorf("message of %d bytes: %.20q...", len(m), m)
	}
}

// TestDeepObjectUID: the results of an object nested deeper than fastjson
// reads (300 levels) carry its uid, as a shallow one's.
func TestDeepObjectUID(t *testing.T) {
	f := finding(object(deployment, "team", "web"), engine.Result{Policy: "p", Outcome: engine.Fail, Message: "m"})
	f.Object.JSON = []byte(`{"spec":` + strings.Repeat(`{"a":`, 1000) + `1` + strings.Repeat(`}`, 1000) + `,"metadata":{"name":"web","uid":"u-\u00e9"}}`)
	if rs := results([]offline.Finding{f}); len(rs) != 1 || rs[0].Resources[0].UID != "u-é" {
		t.Errorf("results %+v, want the uid u-é", rs)
	}
}
