package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/manifest"
)

// applies is the testdata of the "not applicable is not pass" tests: one
// policy of each kind that refuses (or changes) every ConfigMap it applies
// to, applying only in namespaces labelled team=a, to ConfigMaps labelled
// track=canary, never to those labelled exempt.
func applies(name string) string { return filepath.Join("testdata", "applies", name) }

// rows are the table's rows as "RESOURCE POLICY RESULT MESSAGE", single
// spaced.
func rows(table string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "ConfigMap ") {
			out[strings.Join(strings.Fields(l), " ")] = true
		}
	}
	return out
}

// TestCheckNotApplicable: check gives no result, and never pass, for a
// policy that does not apply to a manifest; --show-skipped lists it as
// skip with the reason; the -o json report leaves it out.
func TestCheckNotApplicable(t *testing.T) {
	args := []string{"check", "-c", applies("policies.yaml"), "-f", applies("configmaps.yaml"), "--namespaces", applies("namespaces.yaml")}
	code, out, errs := run(args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (team-a/plain is refused)\n%s%s", code, out, errs)
	}
	got := rows(out)
	for r := range got {
		if strings.HasPrefix(r, "ConfigMap team-b/plain ") || strings.HasPrefix(r, "ConfigMap kube-system/") ||
			strings.Contains(r, " vap-unbound ") || strings.Contains(r, " map-unbound ") || strings.Contains(r, " skip ") {
			t.Errorf("row of a policy that does not apply: %q", r)
		}
	}
	for _, want := range []string{
		"ConfigMap team-a/plain vap fail ValidatingAdmissionPolicy 'vap' with binding 'vap-team-a' denied request: no passwords in ConfigMaps",
		"ConfigMap team-b/canary vap fail ValidatingAdmissionPolicy 'vap' with binding 'vap-canary' denied request: no passwords in ConfigMaps",
		"ConfigMap team-a/plain map pass 1 patch operations",
	} {
		if !got[want] {
			t.Errorf("no row %q in\n%s", want, out)
		}
	}
	if !strings.Contains(out, "3 pass, 5 fail, 0 warn, 0 error, 0 skip") {
		t.Errorf("summary: want 3 pass, 5 fail, no skip:\n%s", out)
	}

	_, out, _ = run(append(args, "--show-skipped")...)
	got = rows(out)
	for _, want := range []string{
		"ConfigMap team-a/plain vap-unbound skip no binding",
		"ConfigMap team-a/plain map-unbound skip no binding",
		"ConfigMap team-b/plain vap skip binding vap-team-a does not select namespace team-b; binding vap-canary does not select the object's labels",
		"ConfigMap team-b/plain map skip binding map-team-a does not select namespace team-b; binding map-canary does not select the object's labels",
		"ConfigMap team-b/plain validate-team-a skip namespace team-b is not selected",
		"ConfigMap team-a/plain validate-canary skip objectSelector does not select the object's labels",
		"ConfigMap team-a/exempt vap skip match conditions not met: not-exempt",
		"ConfigMap team-a/exempt map skip match conditions not met: not-exempt",
		"ConfigMap team-a/exempt validate-team-a skip match conditions not met: not-exempt",
		"ConfigMap team-a/exempt mutate-team-a skip match conditions not met: not-exempt",
		"ConfigMap kube-system/system vap skip namespace kube-system is exempt",
	} {
		if !got[want] {
			t.Errorf("--show-skipped: no row %q in\n%s", want, out)
		}
	}
	if !strings.Contains(out, "3 pass, 5 fail, 0 warn, 0 error, 27 skip") {
		t.Errorf("--show-skipped summary: want 27 skip:\n%s", out)
	}

	_, out, _ = run(append(args, "-o", "json")...)
	var report struct {
		Summary map[string]int
		Results []struct {
			Policy, Result string
			Resources      []map[string]string
		}
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if report.Summary["skip"] != 0 || report.Summary["pass"] != 3 || report.Summary["fail"] != 5 || len(report.Results) != 8 {
		t.Errorf("report: summary %v, %d results; want 3 pass, 5 fail, nothing else", report.Summary, len(report.Results))
	}
	for _, r := range report.Results {
		if r.Result == "skip" || r.Policy == "vap-unbound" || r.Resources[0]["namespace"] == "kube-system" {
			t.Errorf("report result of a policy that does not apply: %+v", r)
		}
	}
}

// TestTestNotApplicable: tollgate test expects skip of a policy that does
// not apply; a suite expecting pass fails, saying it does not apply and why.
func TestTestNotApplicable(t *testing.T) {
	if code, out, errs := run("test", applies("suite-ok")); code != 0 || !strings.Contains(out, "12 checks, 0 failed") {
		t.Errorf("exit %d, want 0 with 12 checks passing\n%s%s", code, out, errs)
	}
	code, out, errs := run("test", applies("suite-wrong"))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"want pass, got skip (the policy does not apply to this resource: no binding)",
		"want pass, got skip (the policy does not apply to this resource: binding vap-team-a does not select namespace team-b; binding vap-canary does not select the object's labels)",
		"want pass, got skip (the policy does not apply to this resource: match conditions not met: not-exempt)",
		"want pass, got skip (the policy does not apply to this resource: objectSelector does not select the object's labels)",
		"4 checks, 4 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestReviewNotApplicable: review answers as the apiserver would for a
// policy that does not apply: allowed, unchanged, without warnings; where
// it applies, refused.
func TestReviewNotApplicable(t *testing.T) {
	for _, tc := range []struct {
		name, review, path string
		allowed            bool
	}{
		{"no binding", "review-team-a-plain.json", "/validate/vap-unbound", true},
		{"MAP without binding", "review-team-a-plain.json", "/mutate/map-unbound", true},
		{"match conditions false", "review-team-a-exempt.json", "/validate/vap/vap-team-a", true},
		{"object selector", "review-team-a-plain.json", "/validate/validate-canary", true},
		{"applies", "review-team-a-plain.json", "/validate/vap/vap-team-a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run("review", "-c", applies("policies.yaml"), "-f", applies(tc.review), "--path", tc.path)
			var rev struct {
				Response struct {
					Allowed  bool
					Patch    string
					Warnings []string
				}
			}
			if err := json.Unmarshal([]byte(out), &rev); err != nil {
				t.Fatalf("exit %d: %v\n%s%s", code, err, out, errs)
			}
			wantCode := 0
			if !tc.allowed {
				wantCode = 1
			}
			r := rev.Response
			if code != wantCode || r.Allowed != tc.allowed || (tc.allowed && (r.Patch != "" || len(r.Warnings) > 0)) {
				t.Errorf("exit %d, response %+v; want exit %d, allowed %v, no patch, no warning\n%s", code, r, wantCode, tc.allowed, out)
			}
		})
	}
}

// apiserver serves, read-only, what tollgate audit reads of a cluster:
// discovery of the core group, and lists of namespaces and configmaps
// (the objects of configmaps.yaml and namespaces.yaml, as stored).
func apiserver(t *testing.T) string {
	t.Helper()
	list := func(kind, file string) []byte {
		objs, err := manifest.Read([]string{applies(file)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		items := make([]json.RawMessage, 0, len(objs))
		for i, o := range objs {
			var m map[string]any
			if err := json.Unmarshal(o.JSON, &m); err != nil {
				t.Fatal(err)
			}
			m["metadata"].(map[string]any)["uid"] = fmt.Sprintf("%s-%d", kind, i)
			b, _ := json.Marshal(m)
			items = append(items, b)
		}
		b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": kind + "List", "metadata": map[string]any{}, "items": items})
		return b
	}
	bodies := map[string][]byte{
		"/api":               []byte(`{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`),
		"/apis":              []byte(`{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`),
		"/api/v1":            []byte(`{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["get","list"]},{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list"]}]}`),
		"/api/v1/namespaces": list("Namespace", "namespaces.yaml"),
		"/api/v1/configmaps": list("ConfigMap", "configmaps.yaml"),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// TestAuditNotApplicable: tollgate audit, against a cluster holding the
// same ConfigMaps, reports no result for a policy that does not apply to a
// stored object, lists it as skip with the reason on request, and leaves it
// out of the -o json report.
func TestAuditNotApplicable(t *testing.T) {
	args := []string{"audit", "--kubeconfig", apiserver(t), "-c", applies("policies.yaml")}
	code, out, errs := run(args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	got := rows(out)
	for r := range got {
		if strings.HasPrefix(r, "ConfigMap team-b/plain ") || strings.HasPrefix(r, "ConfigMap kube-system/") ||
			strings.Contains(r, " vap-unbound ") || strings.Contains(r, " pass ") || strings.Contains(r, " skip ") {
			t.Errorf("row of a policy that does not apply: %q", r)
		}
	}
	for _, want := range []string{
		"ConfigMap team-a/plain vap fail ValidatingAdmissionPolicy 'vap' with binding 'vap-team-a' denied request: no passwords in ConfigMaps",
		"ConfigMap team-b/canary vap fail ValidatingAdmissionPolicy 'vap' with binding 'vap-canary' denied request: no passwords in ConfigMaps",
		"ConfigMap team-a/exempt validate-canary fail configmap \"exempt\" violates policy validate-canary: no passwords in ConfigMaps",
	} {
		if !got[want] {
			t.Errorf("no row %q in\n%s", want, out)
		}
	}
	_, out, _ = run(append(args, "--show-skipped")...)
	got = rows(out)
	for _, want := range []string{
		"ConfigMap team-a/plain vap-unbound skip no binding",
		"ConfigMap team-b/plain vap skip binding vap-team-a does not select namespace team-b; binding vap-canary does not select the object's labels",
		"ConfigMap team-a/plain validate-canary skip objectSelector does not select the object's labels",
		"ConfigMap team-a/exempt vap skip match conditions not met: not-exempt",
		"ConfigMap kube-system/system vap skip namespace kube-system is exempt",
	} {
		if !got[want] {
			t.Errorf("--show-skipped: no row %q in\n%s", want, out)
		}
	}
	_, out, _ = run(append(args, "-o", "json")...)
	var report struct {
		Summary map[string]int
		Results []struct{ Policy, Result string }
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if report.Summary["skip"] != 0 || report.Summary["pass"] != 0 || report.Summary["fail"] != 5 || len(report.Results) != 5 {
		t.Errorf("report: summary %v, %d results; want 5 fail, nothing else\n%s", report.Summary, len(report.Results), out)
	}
}
