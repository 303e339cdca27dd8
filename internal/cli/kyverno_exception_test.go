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

const (
	kyvernoExceptionPolicies = "testdata/kyverno-exceptions/policies.yaml"
	kyvernoExceptionPods     = "testdata/kyverno-exceptions/pods.yaml"
)

// kyvernoExceptionCases is what every path must say of Kyverno's
// PolicyExceptions (testdata/kyverno-exceptions): legacy-hostpath lifts
// disallow-host-path whole from shop/legacy-*; everything-once would lift it
// everywhere but expired; wrong-kind names it as a
// NamespacedValidatingPolicy; shop-mirrors and shop-busybox give
// allowed-registries values in shop, where it still runs; ops-anything
// lifts it in ops, reported as a pass; lab-skip's condition errs for a Pod
// without annotations, which is lab-annotated's error.
var kyvernoExceptionCases = []struct {
	pod, policy string
	want        engine.Outcome
	message     string
}{
	{"shop/legacy-db", "disallow-host-path", engine.Skip, "rule is skipped due to policy exception: shop/legacy-hostpath"},
	{"shop/cache", "disallow-host-path", engine.Fail, "Policy disallow-host-path failed: hostPath volumes are forbidden"},
	{"shop/web", "allowed-registries", engine.Pass, ""},
	{"other/web", "allowed-registries", engine.Fail, "Policy allowed-registries failed: images come from registry.shop, not docker.io/library/nginx:1.27"},
	{"ops/agent", "allowed-registries", engine.Pass, "rule is passed due to policy exception: ops/ops-anything"},
	{"lab/tool", "lab-annotated", engine.Fail, "Policy lab-annotated error: failed to load context: no such key: annotations"},
	{"lab/skipper", "lab-annotated", engine.Skip, "rule is skipped due to policy exception: lab/lab-skip"},
}

// TestKyvernoExceptionsAgree runs kyvernoExceptionCases through the
// server's HTTP endpoint, check, test and review.
func TestKyvernoExceptionsAgree(t *testing.T) {
	set, err := policy.Load(kyvernoExceptionPolicies)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Read([]string{kyvernoExceptionPods}, nil)
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
		mux := http.NewServeMux()
		for _, g := range set.Groups {
			mux.Handle(g.Path(), webhook.New(eng.Handler(g), webhook.Options{Logger: slog.New(slog.DiscardHandler), Observer: m}))
		}
		srv := httptest.NewServer(mux)
		defer srv.Close()
		for _, c := range kyvernoExceptionCases {
			resp, err := http.Post(srv.URL+groups[c.policy].Path(), "application/json", bytes.NewReader(reviewOf(t, pods[c.pod])))
			if err != nil {
				t.Fatal(err)
			}
			var review struct {
				Response struct {
					Allowed bool `json:"allowed"`
					Status  struct {
						Message string `json:"message"`
					} `json:"status"`
				} `json:"response"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&review); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if review.Response.Allowed != (c.want != engine.Fail) {
				t.Errorf("%s %s: allowed %v, want outcome %s", c.pod, c.policy, review.Response.Allowed, c.want)
			}
			if c.want == engine.Fail && review.Response.Status.Message != c.message {
				t.Errorf("%s %s: denied with %q, want %q", c.pod, c.policy, review.Response.Status.Message, c.message)
			}
		}
		want := `# HELP tollgate_policy_exceptions_used_total Policies lifted for a review by a PolicyException, by policy and exception.
# TYPE tollgate_policy_exceptions_used_total counter
tollgate_policy_exceptions_used_total{exception="lab/lab-skip",policy="lab-annotated"} 1
tollgate_policy_exceptions_used_total{exception="ops/ops-anything",policy="allowed-registries"} 1
tollgate_policy_exceptions_used_total{exception="shop/legacy-hostpath",policy="disallow-host-path"} 1
`
		if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "tollgate_policy_exceptions_used_total"); err != nil {
			t.Error(err)
		}
	})

	t.Run("check", func(t *testing.T) {
		code, out, stderr := run("check", "-c", kyvernoExceptionPolicies, "-f", kyvernoExceptionPods, "-o", "json")
		if code != exitDenied {
			t.Fatalf("exit %d, want %d: %s", code, exitDenied, stderr)
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		for _, c := range kyvernoExceptionCases {
			found := false
			for _, res := range r.Results {
				ref := res.Resources[0]
				if ref.Namespace+"/"+ref.Name != c.pod || res.Policy != c.policy {
					continue
				}
				found = true
				if res.Result != c.want || res.Message != c.message {
					t.Errorf("%s %s: %s %q, want %s %q", c.pod, c.policy, res.Result, res.Message, c.want, c.message)
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
		for _, c := range kyvernoExceptionCases {
			fmt.Fprintf(&results, "- {policy: %s, resources: [%s], result: %s}\n", c.policy, c.pod, c.want)
		}
		suite := fmt.Sprintf("apiVersion: tollgate.dev/v1alpha1\nkind: Test\nmetadata: {name: kyverno-exceptions}\npolicies: [%s]\nresources: [%s]\nresults:\n%s",
			abs(kyvernoExceptionPolicies), abs(kyvernoExceptionPods), results.String())
		if err := os.WriteFile(filepath.Join(dir, "tollgate-test.yaml"), []byte(suite), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := run("test", dir)
		if code != 0 || !strings.Contains(out, fmt.Sprintf("%d checks, 0 failed", len(kyvernoExceptionCases))) {
			t.Errorf("exit %d:\n%s%s", code, out, stderr)
		}
	})

	t.Run("review", func(t *testing.T) {
		dir := t.TempDir()
		for i, c := range kyvernoExceptionCases {
			file := filepath.Join(dir, fmt.Sprintf("%d.json", i))
			if err := os.WriteFile(file, reviewOf(t, pods[c.pod]), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := run("review", "-c", kyvernoExceptionPolicies, "-f", file, "--path", groups[c.policy].Path())
			if want := map[bool]int{true: exitDenied, false: 0}[c.want == engine.Fail]; code != want {
				t.Errorf("%s %s: exit %d, want %d (%s)", c.pod, c.policy, code, want, stderr)
			}
		}
	})
}

// TestKyvernoExceptionRejects: a Kyverno PolicyException is read strictly,
// and one whose matchConditions do not compile stops the load, naming it.
func TestKyvernoExceptionRejects(t *testing.T) {
	policies, err := os.ReadFile(kyvernoExceptionPolicies)
	if err != nil {
		t.Fatal(err)
	}
	const head = "---\napiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: bad, namespace: shop}\nspec:\n"
	const ref = "  policyRefs: [{name: disallow-host-path, kind: ValidatingPolicy}]\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown field", head + ref + "  match: {any: []}\n", `unknown field "spec.match"`},
		{"no policyRefs", head + "  allowedValues: [a]\n", "spec.policyRefs: Invalid value: null: must specify at least one policy ref"},
		{"ref without kind", head + "  policyRefs: [{name: disallow-host-path}]\n", "spec.policyRefs[0].kind: Invalid value: \"\": must specify policy kind"},
		{"reportResult", head + ref + "  reportResult: fail\n", `spec.reportResult: Unsupported value: "fail"`},
		{"JSON mode", head + ref + "  evaluationMode: JSON\n", `spec.evaluationMode: Unsupported value: "JSON"`},
		{"version", strings.Replace(head, "/v1\n", "/v2\n", 1) + ref, `apiVersion: Unsupported value: "policies.kyverno.io/v2"`},
		{"condition", head + ref + "  matchConditions: [{name: c, expression: \"object.metadata.name.startsWith(1)\"}]\n",
			`PolicyException "shop/bad": spec.matchConditions[0].expression: Invalid value: "object.metadata.name.startsWith(1)"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "p.yaml")
			if err := os.WriteFile(file, append(append([]byte{}, policies...), tc.doc...), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := run("check", "-c", file, "-f", kyvernoExceptionPods)
			if code == 0 || code == exitDenied || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want a load error with %q:\n%s%s", code, tc.want, out, stderr)
			}
		})
	}
}

// TestKyvernoExceptionsAutogen: an exception lifts the rules autogen writes
// for Pod controllers too, its conditions reading the controller.
func TestKyvernoExceptionsAutogen(t *testing.T) {
	code, out, errs := run("check", "-c", kyvernoExceptionPolicies, "-f", "testdata/kyverno-exceptions/deployments.yaml")
	if code != exitDenied {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitDenied, out, errs)
	}
	for _, want := range []string{
		"Deployment shop/legacy-app  disallow-host-path  skip    rule is skipped due to policy exception: shop/legacy-hostpath\n",
		"Deployment shop/app         disallow-host-path  fail    Policy disallow-host-path failed: hostPath volumes are forbidden\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
