package suite

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunKyverno: Kyverno's suites run as Kyverno reads them (operations
// from the values, a name without a namespace in every namespace, a
// failed Audit validation is fail), each check failing when it should.
func TestRunKyverno(t *testing.T) {
	for _, tc := range []struct {
		suite string
		want  []string
	}{
		{"ok", []string{
			`kyverno-test.yaml require-team Pod shop/web want=pass got=pass problem=""`,
			`kyverno-test.yaml require-team Pod default/legacy want=pass got=pass problem=""`,
			`kyverno-test.yaml require-team Pod shop/cache want=fail got=fail problem=""`,
			`kyverno-test.yaml require-team Pod lab/web want=skip got=skip problem=""`,
			`kyverno-test.yaml require-team Deployment shop/web want=pass got=pass problem=""`,
			`kyverno-test.yaml require-team Pod kube-system/proxy want=skip got=skip problem=""`,
			`kyverno-test.yaml no-hostpath-on-update Pod default/legacy (UPDATE) want=fail got=fail problem=""`,
			`kyverno-test.yaml no-hostpath-on-update Pod shop/web want=skip got=skip problem=""`,
			`kyverno-test.yaml no-hostpath-on-update Pod shop/web (UPDATE) want=pass got=pass problem=""`,
			`kyverno-test.yaml prod-registry Pod shop/web want=pass got=pass problem=""`,
			`kyverno-test.yaml prod-registry Pod shop/cache want=fail got=fail problem=""`,
			`kyverno-test.yaml prod-registry Pod lab/web want=skip got=skip problem=""`,
			`kyverno-test.yaml deployers-only Deployment shop/web want=pass got=pass problem=""`,
		}},
		{"mistakes", []string{
			`kyverno-test.yaml require-team Pod kube-system/proxy want=fail got=skip problem="want fail, got skip"`,
			`kyverno-test.yaml require-team Pod shop/cache want=pass got=fail problem="want pass, got fail"`,
			// without a namespace: every Pod named web
			`kyverno-test.yaml require-team Pod shop/web want=pass got=pass problem=""`,
			`kyverno-test.yaml require-team Pod lab/web want=pass got=fail problem="want pass, got fail"`,
			`kyverno-test.yaml require-team Pod no-such-pod want=pass got= problem="no Pod no-such-pod among the test's resources"`,
			`kyverno-test.yaml require-team Deployment cache want=pass got= problem="no Deployment cache among the test's resources"`,
			`kyverno-test.yaml require-tem Pod shop/web want=pass got=skip problem="no policy require-tem among the test's policies"`,
			// without userinfo, request.userInfo has no groups: an error
			`kyverno-test.yaml deployers-only Deployment shop/web want=pass got=error problem="want pass, got error"`,
		}},
	} {
		t.Run(tc.suite, func(t *testing.T) {
			s, err := Load(filepath.Join("testdata", "kyverno", tc.suite, KyvernoFileName))
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

// TestRunKyvernoMessages: a check says why, in Kyverno's terms where they
// differ from tollgate's.
func TestRunKyvernoMessages(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "kyverno", "mistakes", KyvernoFileName))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]string{
		0: "the policy does not apply to this resource: namespace kube-system is exempt",
		1: "pods carry a team label (tollgate warns: the policy's validationActions do not deny)",
		7: "Policy deployers-only error: error: no such key: groups",
	} {
		if !strings.Contains(checks[i].Message, want) {
			t.Errorf("check %d (%s %s): message %q, want it to contain %q", i, checks[i].Policy, checks[i].Resource, checks[i].Message, want)
		}
	}
}

// TestLoadKyvernoErrors: what tollgate cannot honour is refused, by name,
// never skipped.
func TestLoadKyvernoErrors(t *testing.T) {
	dir := t.TempDir()
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join("testdata", "kyverno", p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [" + abs("policies.yaml") + "]\nresources: [" + abs("resources.yaml") + "]\n"
	result := "results: [{policy: require-team, kind: Pod, resources: [cache], result: fail}]\n"
	values := func(name, body string) string {
		return write(name, "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\n"+body)
	}
	for _, tc := range []struct {
		name, test, want string
	}{
		{"unknown field", head + result + "resource: x.yaml\n", `unknown field "resource"`},
		{"json payload", head + result + "jsonPayloads: [p.json]\n", "jsonPayloads: not supported by tollgate test"},
		{"cluster resources", head + result + "clusterResources: [c.yaml]\n", "clusterResources: not supported by tollgate test"},
		{"missing context", head + result + "context: context.yaml\n", "context: open "},
		{"context images", head + result + "context: " + write("ctx-images.yaml", "apiVersion: cli.kyverno.io/v1alpha1\nkind: Context\nspec: {images: [{image: nginx}]}\n"), "spec.images: not supported by tollgate test"},
		{"context kind", head + result + "context: " + write("ctx-kind.yaml", "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\nspec: {}\n"), "want apiVersion cli.kyverno.io/v1alpha1 and kind Context"},
		{"context field", head + result + "context: " + write("ctx-field.yaml", "apiVersion: cli.kyverno.io/v1alpha1\nkind: Context\nspec: {resource: []}\n"), `unknown field "spec.resource"`},
		{"context object", head + result + "context: " + write("ctx-obj.yaml", "apiVersion: cli.kyverno.io/v1alpha1\nkind: Context\nspec: {resources: [{kind: ConfigMap, metadata: {name: a}}]}\n"), "spec.resources[0]: give its apiVersion, kind and metadata.name"},
		{"patched resources", head + "results: [{policy: require-team, kind: Pod, resources: [cache], result: pass, patchedResources: p.yaml}]\n", "results[0].patchedResources: not supported by tollgate test"},
		{"resource specs", head + "results: [{policy: require-team, kind: Pod, resourceSpecs: [{version: v1, name: cache}], result: pass}]\n", "results[0].resourceSpecs: not supported by tollgate test"},
		{"generated", head + "results: [{policy: require-team, kind: Pod, resources: [cache], result: pass, generatedResource: g.yaml}]\n", "results[0].generatedResource: not supported by tollgate test"},
		{"warn", head + "results: [{policy: require-team, kind: Pod, resources: [cache], result: warn}]\n", `results[0].result "warn": want pass, fail, skip or error`},
		{"no kind", head + "results: [{policy: require-team, resources: [cache], result: fail}]\n", "results[0]: give the kind and the resources"},
		{"operation", head + "results: [{policy: require-team, kind: Pod, resources: [cache], result: fail, operation: CONNECT}]\n", `results[0].operation "CONNECT": want CREATE, UPDATE or DELETE`},
		{"no results", head, "a test needs policies, resources and results"},
		{"wrong kind", strings.Replace(head, "kind: Test", "kind: Values", 1) + result, `kind "Values": want Test`},
		{"other variable", head + result + "variables: " + values("v-global.yaml", "globalValues: {request.namespace: shop}\n"), "values: globalValues: request.namespace: tollgate test sets no Kyverno variable but request.operation"},
		{"rule values", head + result + "variables: " + values("v-rules.yaml", "policies: [{name: require-team, rules: [{name: r, values: {a: b}}]}]\n"), "values: policies[0].rules: not supported by tollgate test"},
		{"bad operation value", head + result + "values: {globalValues: {request.operation: PATCH}}\n", "values: globalValues: request.operation PATCH: want CREATE, UPDATE or DELETE"},
		{"subresources", head + result + "values: {subresources: []}\n", "values: subresources: not supported by tollgate test"},
		{"values file kind", head + result + "variables: " + write("v2.yaml", "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\n"), "want apiVersion cli.kyverno.io/v1alpha1 and kind Values"},
		{"roles", head + result + "userinfo: " + write("u.yaml", "apiVersion: cli.kyverno.io/v1alpha1\nkind: UserInfo\nroles: [\"shop:admin\"]\n"), "roles and clusterRoles: not supported by tollgate test"},
		{"user extra", head + result + "userinfo: " + write("u2.yaml", "apiVersion: cli.kyverno.io/v1alpha1\nkind: UserInfo\nuserInfo: {extra: {a: [b]}}\n"), "userInfo.extra: not supported by tollgate test"},
		{"missing values", head + result + "variables: no-such-values.yaml\n", "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := write(KyvernoFileName, tc.test)
			s, err := Load(file)
			if err == nil {
				t.Fatalf("loaded %+v", s)
			}
			if !strings.HasPrefix(err.Error(), file+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want %s: ...%q", err, file, tc.want)
			}
		})
	}
}

// TestRunKyvernoExceptionsFile: the exceptions of a Kyverno suite are
// PolicyExceptions, and nothing else.
func TestRunKyvernoExceptionsFile(t *testing.T) {
	policies, err := filepath.Abs(filepath.Join("testdata", "kyverno", "policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	resources := filepath.Join(filepath.Dir(policies), "resources.yaml")
	test := "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [" + policies + "]\nresources: [" + resources + "]\n" +
		"exceptions: [" + policies + "]\nresults: [{policy: require-team, kind: Pod, resources: [cache], result: fail}]\n"
	file := filepath.Join(t.TempDir(), KyvernoFileName)
	if err := os.WriteFile(file, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if checks, err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "want PolicyExceptions only") {
		t.Errorf("Run = %v, %v; want an error saying the file holds no PolicyExceptions", checks, err)
	}
}
