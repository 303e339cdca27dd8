//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policyreport"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestPolicyReportWriter keeps reports of both APIs equal to findings in a
// real apiserver with deploy/crds/ installed: the stored objects pass the
// CRDs' schemas, equal findings write nothing (so what is compared is what
// is stored), a change writes one report, results past the bound split
// into parts that come and go, no findings delete them, and Existing finds
// them all.
func TestPolicyReportWriter(t *testing.T) {
	ctx := context.Background()
	if err := framework.InstallReportCRDs(cluster.restConfig, string(policyreport.OpenReports), string(policyreport.WGPolicy)); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cluster.restConfig)
	for _, tt := range []struct {
		api                 policyreport.API
		namespaced, cluster schema.GroupVersionResource
	}{
		{policyreport.OpenReports, gvr("openreports.io/v1alpha1", "reports"), gvr("openreports.io/v1alpha1", "clusterreports")},
		{policyreport.WGPolicy, gvr("wgpolicyk8s.io/v1alpha2", "policyreports"), gvr("wgpolicyk8s.io/v1alpha2", "clusterpolicyreports")},
	} {
		t.Run(string(tt.api), func(t *testing.T) {
			ns := "polr-" + string(tt.api)
			if err := framework.EnsureNamespace(ctx, cluster.client, ns, nil); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			ops := map[string]int{}
			w := policyreport.NewWriter(dyn, tt.api, policyreport.Options{MaxResultsPerReport: 4, OnWrite: func(op string) {
				mu.Lock()
				defer mu.Unlock()
				ops[op]++
			}})
			sync := func(namespace string, fs []offline.Finding, want map[string]int) {
				t.Helper()
				mu.Lock()
				clear(ops)
				mu.Unlock()
				n, err := w.Sync(ctx, namespace, fs)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				total := 0
				for _, c := range ops {
					total += c
				}
				if n != total || fmt.Sprint(ops) != fmt.Sprint(want) {
					t.Errorf("writes %d, ops %v; want %v", n, ops, want)
				}
			}
			reports := func() map[string]*unstructured.Unstructured {
				t.Helper()
				l, err := dyn.Resource(tt.namespaced).Namespace(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]*unstructured.Unstructured{}
				for i := range l.Items {
					out[l.Items[i].GetName()] = &l.Items[i]
				}
				return out
			}
			// Someone else's report in the namespace stays as it is.
			other := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": tt.namespaced.GroupVersion().String(), "kind": kindOf(tt.api, true),
				"metadata": map[string]any{"name": "other-tool", "namespace": ns},
				"results":  []any{map[string]any{"policy": "theirs", "result": "fail", "source": "other"}},
			}}
			if _, err := dyn.Resource(tt.namespaced).Namespace(ns).Create(ctx, other, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}

			// Three objects, three results: one report.
			fs := reportFindings(ns, 3)
			sync(ns, fs, map[string]int{"create": 1})
			got := reports()
			r := got["tollgate"]
			if r == nil || len(got) != 2 {
				t.Fatalf("reports: %v", keys(got))
			}
			if r.GetLabels()["app.kubernetes.io/managed-by"] != "tollgate" {
				t.Errorf("labels %v", r.GetLabels())
			}
			summary, _, _ := unstructured.NestedMap(r.Object, "summary")
			if fmt.Sprint(summary) != "map[error:0 fail:1 pass:1 skip:1 warn:0]" {
				t.Errorf("summary %v", summary)
			}
			results, _, _ := unstructured.NestedSlice(r.Object, "results")
			if len(results) != 3 {
				t.Fatalf("%d results", len(results))
			}
			first := results[0].(map[string]any)
			res := first["resources"].([]any)[0].(map[string]any)
			if first["policy"] != "require-team" || first["result"] != "skip" || first["source"] != "tollgate" ||
				first["properties"].(map[string]any)["exception"] != "legacy" || res["uid"] != "uid-cm-0" || res["name"] != "cm-0" || res["kind"] != "ConfigMap" {
				t.Errorf("first result %v", first)
			}
			if ts, _, _ := unstructured.NestedInt64(first, "timestamp", "seconds"); ts == 0 {
				t.Errorf("no timestamp: %v", first)
			}
			rv := r.GetResourceVersion()

			// Equal findings: nothing written.
			sync(ns, reportFindings(ns, 3), map[string]int{})
			if got := reports()["tollgate"].GetResourceVersion(); got != rv {
				t.Errorf("resourceVersion %s, was %s", got, rv)
			}

			// One result changes: one write.
			fs = reportFindings(ns, 3)
			fs[1].Results[0].Outcome, fs[1].Results[0].Message = engine.Pass, ""
			sync(ns, fs, map[string]int{"update": 1})
			results, _, _ = unstructured.NestedSlice(reports()["tollgate"].Object, "results")
			if ts0, _, _ := unstructured.NestedInt64(results[0].(map[string]any), "timestamp", "seconds"); ts0 != mustInt(first, "timestamp", "seconds") {
				t.Errorf("an unchanged result's timestamp moved: %d, was %d", ts0, mustInt(first, "timestamp", "seconds"))
			}

			// Ten results, four a report: three parts.
			sync(ns, reportFindings(ns, 10), map[string]int{"create": 2, "update": 1})
			got = reports()
			for name, n := range map[string]int{"tollgate": 4, "tollgate-2": 4, "tollgate-3": 2} {
				rs, _, _ := unstructured.NestedSlice(got[name].Object, "results")
				if len(rs) != n {
					t.Errorf("%s: %d results, want %d", name, len(rs), n)
				}
			}
			sync(ns, reportFindings(ns, 10), map[string]int{})

			// The cluster-scoped report.
			sync("", []offline.Finding{reportFinding("", "Namespace", ns, engine.Fail)}, map[string]int{"create": 1})
			if _, err := dyn.Resource(tt.cluster).Get(ctx, "tollgate", metav1.GetOptions{}); err != nil {
				t.Error(err)
			}

			// A new leader finds what exists.
			existing, err := w.Existing(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if existing[ns] != 10 || existing[""] != 1 {
				t.Errorf("existing %v", existing)
			}

			// Five results: the third part goes.
			sync(ns, reportFindings(ns, 5), map[string]int{"update": 1, "delete": 1})
			if got := reports(); len(got) != 3 || got["tollgate-3"] != nil {
				t.Errorf("reports: %v", keys(got))
			}

			// No findings: no reports, but the other tool's.
			sync(ns, nil, map[string]int{"delete": 2})
			sync("", nil, map[string]int{"delete": 1})
			if got := reports(); len(got) != 1 || got["other-tool"] == nil {
				t.Errorf("reports: %v", keys(got))
			}
			existing, err = w.Existing(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := existing[ns]; ok || len(existing) != 0 {
				t.Errorf("existing %v", existing)
			}
		})
	}
}

// reportFindings are n ConfigMaps' findings in ns, one policy each: skip
// (by an exception), fail, pass, then round again.
func reportFindings(ns string, n int) []offline.Finding {
	var fs []offline.Finding
	for i := range n {
		fs = append(fs, reportFinding(ns, "ConfigMap", fmt.Sprintf("cm-%d", i), []engine.Outcome{engine.Skip, engine.Fail, engine.Pass}[i%3]))
	}
	return fs
}

func reportFinding(ns, kind, name string, o engine.Outcome) offline.Finding {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: kind}
	js := fmt.Sprintf(`{"apiVersion":"v1","kind":%q,"metadata":{"name":%q,"namespace":%q,"uid":"uid-%s"}}`, kind, name, ns, name)
	r := engine.Result{Policy: "require-team", Outcome: o}
	switch o {
	case engine.Fail:
		r.Message = "a team label is required"
	case engine.Skip:
		r.Message, r.Exception = "exempted", "legacy"
	}
	return offline.Finding{Object: &manifest.Object{JSON: []byte(js), GVK: gvk, Namespace: ns, Name: name}, Results: []engine.Result{r}, Allowed: o != engine.Fail}
}

func gvr(gv, resource string) schema.GroupVersionResource {
	g, _ := schema.ParseGroupVersion(gv)
	return g.WithResource(resource)
}

func kindOf(api policyreport.API, namespaced bool) string {
	switch {
	case api == policyreport.OpenReports && namespaced:
		return "Report"
	case api == policyreport.OpenReports:
		return "ClusterReport"
	case namespaced:
		return "PolicyReport"
	}
	return "ClusterPolicyReport"
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustInt(m map[string]any, path ...string) int64 {
	v, _, _ := unstructured.NestedInt64(m, path...)
	return v
}
