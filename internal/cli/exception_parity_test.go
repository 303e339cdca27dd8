package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/metrics"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/report"
	"github.com/tollgate-dev/tollgate/internal/webhook"
)

// exceptionCases is the one table every path must agree on. legacy-apps
// exempts shop/legacy-* from both policies; old-batch would exempt
// tier=batch Pods but expired in 2020, so it is applied nowhere; debug-tools
// lifts one named rule of pod-hygiene from shop/debug-*.
var exceptionCases = []struct {
	pod, policy string
	want        engine.Outcome
	exception   string
}{
	{"shop/legacy-web", "require-team", engine.Skip, "legacy-apps"},
	{"shop/legacy-web", "no-latest", engine.Skip, "legacy-apps"},
	{"shop/nightly", "require-team", engine.Fail, ""}, // old-batch expired
	{"shop/nightly", "no-latest", engine.Fail, ""},
	{"other/legacy-web", "require-team", engine.Fail, ""}, // legacy-apps is for shop only
	{"other/legacy-web", "no-latest", engine.Fail, ""},
	{"shop/good", "require-team", engine.Pass, ""},
	{"shop/good", "no-latest", engine.Pass, ""},
	{"shop/good", "pod-hygiene", engine.Pass, ""},
	{"shop/debug-net", "pod-hygiene", engine.Skip, "debug-tools"}, // its only failing rule is lifted
	{"shop/debug-all", "pod-hygiene", engine.Fail, "debug-tools"}, // no-host-pid still fails
	{"shop/debug-all", "no-latest", engine.Fail, ""},              // a VAP's rules are not lifted
}

const (
	exceptionPolicies = "testdata/exceptions/policies.yaml"
	exceptionPods     = "testdata/exceptions/pods.yaml"
)

// TestExceptionsAgree runs exceptionCases through the server's HTTP
// endpoint, check, test and review: the same outcome on every path, the
// exception named, and the expired one applied by none.
func TestExceptionsAgree(t *testing.T) {
	set, err := policy.Load(exceptionPolicies)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Read([]string{exceptionPods}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]*manifest.Object{}
	for _, o := range objs {
		pods[o.Namespace+"/"+o.Name] = o
	}
	groups := map[string]*policy.Group{}
	for _, g := range set.Groups {
		for _, p := range g.Policies {
			groups[p.Name()] = g
		}
	}

	t.Run("server", func(t *testing.T) {
		eng := engine.New(set, engine.Options{})
		m := metrics.New()
		var logs bytes.Buffer
		logger := slog.New(slog.NewJSONHandler(&logs, nil))
		mux := http.NewServeMux()
		for _, g := range set.Groups {
			mux.Handle(g.Path(), webhook.New(eng.Handler(g), webhook.Options{Logger: logger, Observer: m}))
		}
		srv := httptest.NewServer(mux)
		defer srv.Close()
		used := 0
		for _, c := range exceptionCases {
			resp, err := http.Post(srv.URL+groups[c.policy].Path(), "application/json", bytes.NewReader(reviewOf(t, pods[c.pod])))
			if err != nil {
				t.Fatal(err)
			}
			var review struct {
				Response struct {
					Allowed bool `json:"allowed"`
				} `json:"response"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&review); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if review.Response.Allowed != (c.want != engine.Fail) {
				t.Errorf("%s %s: allowed %v, want outcome %s", c.pod, c.policy, review.Response.Allowed, c.want)
			}
			if c.exception != "" {
				used++
			}
		}
		want := `# HELP tollgate_policy_exceptions_used_total Policies lifted for a review by a PolicyException, by policy and exception.
# TYPE tollgate_policy_exceptions_used_total counter
tollgate_policy_exceptions_used_total{exception="debug-tools",policy="pod-hygiene"} 2
tollgate_policy_exceptions_used_total{exception="legacy-apps",policy="no-latest"} 1
tollgate_policy_exceptions_used_total{exception="legacy-apps",policy="require-team"} 1
`
		if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "tollgate_policy_exceptions_used_total"); err != nil {
			t.Error(err)
		}
		if n := strings.Count(logs.String(), `"msg":"policy exception used"`); n != used {
			t.Errorf("%d log lines of exceptions used, want %d:\n%s", n, used, logs.String())
		}
		if !strings.Contains(logs.String(), `"policy":"require-team","exception":"legacy-apps"`) {
			t.Errorf("no log line names the policy and the exception:\n%s", logs.String())
		}
	})

	t.Run("check", func(t *testing.T) {
		code, out, stderr := run("check", "-c", exceptionPolicies, "-f", exceptionPods, "-o", "json")
		if code != exitDenied {
			t.Fatalf("exit %d, want %d: %s", code, exitDenied, stderr)
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		for _, c := range exceptionCases {
			found := false
			for _, res := range r.Results {
				ref := res.Resources[0]
				if ref.Namespace+"/"+ref.Name != c.pod || res.Policy != c.policy {
					continue
				}
				found = true
				if res.Result != c.want {
					t.Errorf("%s %s: %s (%s), want %s", c.pod, c.policy, res.Result, res.Message, c.want)
				}
				if named := strings.Contains(res.Message, "PolicyException "+c.exception+":"); named != (c.exception != "") {
					t.Errorf("%s %s: message %q, want exception %q named", c.pod, c.policy, res.Message, c.exception)
				}
			}
			if !found {
				t.Errorf("%s %s: no result", c.pod, c.policy)
			}
		}
	})

	t.Run("test", func(t *testing.T) {
		dir := t.TempDir()
		abs := func(p string) string { a, _ := filepath.Abs(p); return a }
		var results strings.Builder
		for _, c := range exceptionCases {
			fmt.Fprintf(&results, "- {policy: %s, resources: [%s], result: %s}\n", c.policy, c.pod, c.want)
		}
		suite := fmt.Sprintf("apiVersion: tollgate.dev/v1alpha1\nkind: Test\nmetadata: {name: exceptions}\npolicies: [%s]\nresources: [%s]\nresults:\n%s",
			abs(exceptionPolicies), abs(exceptionPods), results.String())
		if err := os.WriteFile(filepath.Join(dir, "tollgate-test.yaml"), []byte(suite), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := run("test", dir)
		if code != 0 || !strings.Contains(out, fmt.Sprintf("%d checks, 0 failed", len(exceptionCases))) {
			t.Errorf("exit %d:\n%s%s", code, out, stderr)
		}
	})

	t.Run("review", func(t *testing.T) {
		dir := t.TempDir()
		for i, c := range exceptionCases {
			file := filepath.Join(dir, fmt.Sprintf("%d.json", i))
			if err := os.WriteFile(file, reviewOf(t, pods[c.pod]), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := run("review", "-c", exceptionPolicies, "-f", file, "--path", groups[c.policy].Path())
			if want := map[bool]int{true: exitDenied, false: 0}[c.want == engine.Fail]; code != want {
				t.Errorf("%s %s: exit %d, want %d (%s)", c.pod, c.policy, code, want, stderr)
			}
		}
	})
}

// reviewOf is the AdmissionReview of a CREATE of the Pod.
func reviewOf(t *testing.T, pod *manifest.Object) []byte {
	t.Helper()
	if pod == nil {
		t.Fatal("no such pod in " + exceptionPods)
	}
	review := fmt.Sprintf(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u-%s","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"name":%q,"namespace":%q,"operation":"CREATE","userInfo":{"username":"dev"},"object":%s}}`,
		pod.Name, pod.Name, pod.Namespace, pod.JSON)
	return []byte(review)
}
