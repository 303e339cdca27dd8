package suite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/engine"
)

func TestFind(t *testing.T) {
	got, err := Find(filepath.Join("testdata", "find"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join("testdata", "find", "gator", "suite.yaml"),
		filepath.Join("testdata", "find", "nested", "kyverno-test.yaml"),
		filepath.Join("testdata", "find", "nested", "pods.tollgate-test.yaml"),
		filepath.Join("testdata", "find", "tollgate-test.yaml"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("Find = %q, want %q (not tollgate-test.yml, not my-tollgate-test.yaml, not pods.kyverno-test.yaml, not a suite.yaml that is no gator Suite)", got, want)
	}
	for _, dir := range []string{filepath.Join("testdata", "find", "empty"), filepath.Join("testdata", "no-such-dir")} {
		if files, err := Find(dir); err == nil {
			t.Errorf("Find(%s) = %q, no error", dir, files)
		}
	}
	_, err = Find(filepath.Join("testdata", "find", "empty"))
	if want := "no tollgate-test.yaml, *.tollgate-test.yaml, kyverno-test.yaml or gator suite.yaml files under " + filepath.Join("testdata", "find", "empty"); err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		want string
	}{
		{"unknown-field", `unknown field "results[0].expected"`},
		{"wrong-kind", "want apiVersion tollgate.dev/v1alpha1 and kind Test"},
		{"wrong-version", "want apiVersion tollgate.dev/v1alpha1 and kind Test"},
		{"no-results", "a test needs resources and results"},
		{"no-resources", "a test needs resources and results"},
		{"bad-result", `results[1].result "denied": want pass, fail, warn, skip or error`},
		{"invalid-yaml", "did not find expected"},
		{"duplicate-key", `key "kind" already set in map`},
		{"no-such-file", "no such file or directory"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			file := filepath.Join("testdata", "load", tc.file+".tollgate-test.yaml")
			s, err := Load(file)
			if err == nil {
				t.Fatalf("loaded %+v", s)
			}
			if !strings.HasPrefix(err.Error(), file+": ") && tc.file != "no-such-file" {
				t.Errorf("error %q does not start with the file name", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// line is a Check for comparing: suite, policy, resource, want, got, and the
// beginning of the problem.
func line(c Check) string {
	return fmt.Sprintf("%s %s %s want=%s got=%s problem=%q", filepath.Base(c.Suite), c.Policy, c.Resource, c.Want, c.Got, firstLine(c.Problem))
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

func TestRun(t *testing.T) {
	const patched = "the mutated resource differs from " // + file
	for _, tc := range []struct {
		suite string
		want  []string
	}{
		{"ok", []string{
			`ok.tollgate-test.yaml require-environment shop/web-dev want=pass got=pass problem=""`,
			`ok.tollgate-test.yaml require-environment batch-runner want=pass got=pass problem=""`,
			`ok.tollgate-test.yaml require-environment default/batch-runner want=pass got=pass problem=""`,
			`ok.tollgate-test.yaml require-environment shop/web-staging want=fail got=fail problem=""`,
			`ok.tollgate-test.yaml require-environment shop want=skip got=skip problem=""`,
			`ok.tollgate-test.yaml nginx-sidecar shop/web-dev want=pass got=pass problem=""`,
			`ok.tollgate-test.yaml nginx-sidecar batch-runner want=skip got=skip problem=""`,
		}},
		{"mistakes", []string{
			`mistakes.tollgate-test.yaml require-environment shop/web-staging want=pass got=fail problem="want pass, got fail"`,
			`mistakes.tollgate-test.yaml require-environment shop/no-such-pod want=pass got= problem="no such resource among the test's resources"`,
			// without a namespace, "default": web-dev is in shop
			`mistakes.tollgate-test.yaml require-environment web-dev want=pass got= problem="no such resource among the test's resources"`,
			`mistakes.tollgate-test.yaml require-environment shop/web want=skip got= problem="2 resources are named shop/web"`,
			`mistakes.tollgate-test.yaml nginx-sidecar shop/web-dev want=pass got=pass problem="` + patched + filepath.Join("testdata", "run", "web-dev.not-injected.yaml") + `; it is:"`,
			`mistakes.tollgate-test.yaml nginx-sidecar shop/web-dev want=pass got=pass problem="open ` + filepath.Join("testdata", "run", "no-such-file.yaml") + `: no such file or directory"`,
			`mistakes.tollgate-test.yaml require-environment shop/web-metrics want=pass got=skip problem="want pass, got skip"`,
		}},
		{"delete", []string{
			`delete.tollgate-test.yaml nginx-sidecar shop/web-dev want=skip got=skip problem=""`,
			`delete.tollgate-test.yaml require-environment shop/web-staging want=skip got=skip problem=""`,
		}},
		// A suite cannot name previous versions (check's --old): UPDATE
		// checks can only expect an error. See TestRunMessages.
		{"update", []string{
			`update.tollgate-test.yaml require-environment shop/web-staging want=error got=error problem=""`,
		}},
		{"typo", []string{
			`typo.tollgate-test.yaml require-enviroment shop/web-staging want=skip got=skip problem="no policy require-enviroment among the test's policies"`,
		}},
		{"params", []string{
			`params.tollgate-test.yaml max-replicas shop/two want=pass got=pass problem=""`,
			`params.tollgate-test.yaml max-replicas shop/three want=fail got=fail problem=""`,
			`params.tollgate-test.yaml max-replicas other/two want=fail got=fail problem=""`,
			`params.tollgate-test.yaml approvers shop/two want=pass got=pass problem=""`,
			`params.tollgate-test.yaml approvers other/two want=fail got=fail problem=""`,
		}},
		{"applies", []string{
			`applies.tollgate-test.yaml vap team-a/plain want=fail got=fail problem=""`,
			`applies.tollgate-test.yaml vap team-b/canary want=fail got=fail problem=""`,
			`applies.tollgate-test.yaml vap team-b/plain want=skip got=skip problem=""`,
			`applies.tollgate-test.yaml vap team-a/exempt want=skip got=skip problem=""`,
			`applies.tollgate-test.yaml map team-b/plain want=skip got=skip problem=""`,
			`applies.tollgate-test.yaml map team-a/exempt want=skip got=skip problem=""`,
			`applies.tollgate-test.yaml validate-canary team-a/plain want=skip got=skip problem=""`,
			`applies.tollgate-test.yaml vap-unbound team-a/plain want=pass got=skip problem="want pass, got skip"`,
			`applies.tollgate-test.yaml vap team-b/plain want=pass got=skip problem="want pass, got skip"`,
		}},
		{"defaults", []string{
			`defaults.tollgate-test.yaml require-environment shop/web-staging want=fail got=fail problem=""`,
			`defaults.tollgate-test.yaml nginx-sidecar shop/web-dev want=skip got=skip problem=""`,
		}},
	} {
		t.Run(tc.suite, func(t *testing.T) {
			s, err := Load(filepath.Join("testdata", "run", tc.suite+".tollgate-test.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			got := runLines(t, s)
			if !slices.Equal(got, tc.want) {
				t.Errorf("checks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestRunMessages: a check carries the policy's message, so that a failing
// suite says why.
func TestRunMessages(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "run", "mistakes.tollgate-test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m := checks[0].Message; !strings.Contains(m, "environment") {
		t.Errorf("message of a failed validation = %q, want it to name the label", m)
	}
	// A custom kind without its CRD is checked, its resource guessed and said.
	if m := checks[len(checks)-1].Message; m != "the policy does not apply to this resource: does not match the request" {
		t.Errorf("message of a custom kind no policy matches = %q", m)
	}
	want := `monitoring.coreos.com/v1 ServiceMonitor: not a built-in kind, and no CustomResourceDefinition given for it (--crd); taken as namespaced resource "servicemonitors"`
	if !slices.Contains(s.Notes(), want) {
		t.Errorf("notes %q lack %q", s.Notes(), want)
	}
	// The mutated resource as it really is follows the problem.
	if p := checks[4].Problem; !strings.Contains(p, "name: sidecar-nginx") {
		t.Errorf("the problem does not show the mutated resource: %q", p)
	}
	s, err = Load(filepath.Join("testdata", "run", "update.tollgate-test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if checks, err = s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := checks[0].Message; !strings.Contains(m, "no previous version of Pod shop/web-staging") {
		t.Errorf("message of an UPDATE without the previous version = %q", m)
	}
}

// TestRunNotApplicable: a check expecting pass of a policy that did not
// apply fails, and says the policy did not apply, and why.
func TestRunNotApplicable(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "run", "applies.tollgate-test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]string{
		2: "the policy does not apply to this resource: binding vap-team-a does not select namespace team-b; binding vap-canary does not select the object's labels",
		3: "the policy does not apply to this resource: match conditions not met: not-exempt",
		7: "the policy does not apply to this resource: no binding",
	} {
		if m := checks[i].Message; m != want {
			t.Errorf("check %d (%s %s): message %q, want %q", i, checks[i].Policy, checks[i].Resource, m, want)
		}
	}
}

// TestRunShippedSuites: the suites in the repository pass, each check.
func TestRunShippedSuites(t *testing.T) {
	for _, dir := range []string{"../../examples/tests", "../../policies/tests"} {
		files, err := Find(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			s, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			checks, err := s.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(checks) < 5 {
				t.Errorf("%s: %d checks", f, len(checks))
			}
			outcomes := map[engine.Outcome]int{}
			for _, c := range checks {
				outcomes[c.Got]++
				if c.Problem != "" {
					t.Errorf("%s: %s", f, line(c))
				}
			}
			if outcomes[engine.Pass] == 0 || outcomes[engine.Fail] == 0 {
				t.Errorf("%s: outcomes %v; a suite should see both pass and fail", f, outcomes)
			}
		}
	}
}

func TestRunErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policies  []string
		resources []string
		want      string
	}{
		{"missing policies", []string{"no-such-policies.yaml"}, []string{"resources.yaml"}, "no-such-policies.yaml"},
		{"missing resources", []string{"policies.yaml"}, []string{"no-such-resources.yaml"}, "no-such-resources.yaml"},
		{"policies that are not policies", []string{"resources.yaml"}, []string{"resources.yaml"}, "resources.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Suite{Policies: tc.policies, Resources: tc.resources,
				Results: []Expected{{Policy: "require-environment", Resources: []string{"shop/web-dev"}, Result: engine.Pass}},
				file:    filepath.Join("testdata", "run", "x.tollgate-test.yaml")}
			checks, err := s.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run = %v, %v; want an error naming %s", checks, err, tc.want)
			}
		})
	}
}

// runLines runs a loaded suite and gives each check as line prints it.
func runLines(t *testing.T, s *Suite) []string {
	t.Helper()
	checks, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range checks {
		got = append(got, line(c))
	}
	return got
}
