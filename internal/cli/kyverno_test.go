package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/certs"
)

// TestKyvernoPolicies: Kyverno ValidatingPolicies decided by check as Kyverno
// decides them: the first failing validation alone, in Kyverno's words
// (its default message for a validation without one, or whose
// messageExpression gives none; an error's bare cause), autogen for a
// Deployment's Pod template, a NamespacedValidatingPolicy only in its
// namespace with Warn, and evaluation.admission off keeping a policy out of
// admission and of the webhooks; lint shows what autogen wrote, manifests
// registers the Pod controllers autogen checks.
func TestKyvernoPolicies(t *testing.T) {
	code, out, errs := run("check", "-c", "testdata/kyverno/policies.yaml", "-f", "testdata/kyverno/resources.yaml", "--show-skipped")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"Pod shop/untagged         pod-rules        fail    Policy pod-rules failed: images need a tag\n",
		"Pod shop/no-team          pod-rules        fail    Policy pod-rules failed: CEL expression validation failed at index 1\n",
		"Pod shop/good             pod-rules        pass",
		"Deployment shop/web       pod-rules        fail    Policy pod-rules failed: images need a tag\n",
		"CronJob shop/nightly      pod-rules        pass",
		"ConfigMap shop/settings   shop-only        warn    Policy shop-only failed: configmaps in shop name an owner\n",
		"ConfigMap other/settings  shop-only        skip    match conditions not met: kyverno-policy-namespace\n",
		"Service shop/lb           background-only  skip    evaluation.admission.enabled is false\n",
		"Secret shop/no-password   secret-keys      fail    Policy secret-keys error: error: no such key: password\n",
		"Secret shop/two-keys      secret-keys      fail    Policy secret-keys failed: CEL expression validation failed at index 1\n",
		"2 pass, 5 fail, 1 warn, 0 error, 32 skip",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = run("lint", "-c", "testdata/kyverno/policies.yaml")
	want := `ValidatingPolicy "pod-rules": autogen (cronjobs): validations[0]: object.spec.jobTemplate.spec.template.spec.containers.all(c, c.image.contains(':'))`
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "autogen: also checks the Pod templates of cronjobs, daemonsets, deployments, jobs, replicasets, statefulsets") {
		t.Errorf("lint: exit %d, output lacks %q:\n%s%s", code, want, out, errs)
	}
	dir := t.TempDir()
	if _, err := certs.EnsureSelfSigned(dir, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	code, out, errs = run("manifests", "--cert-dir", dir, "--url", "https://x:8443", "--config", "testdata/kyverno/policies.yaml")
	// The three policies admission enforces agree on failurePolicy,
	// matchPolicy and selectors: one webhook, with the rules of all three.
	if code != 0 || strings.Count(out, ".binding.vap.tollgate.dev") != 1 || strings.Contains(out, "background-only") ||
		!strings.Contains(out, "    - cronjobs\n") || !strings.Contains(out, "    - daemonsets\n    - deployments\n    - replicasets\n    - statefulsets\n") ||
		!strings.Contains(out, "    - configmaps\n") || !strings.Contains(out, "    - secrets\n") {
		t.Errorf("manifests: exit %d, want one shared webhook, none for background-only, the Pod controllers, configmaps and secrets:\n%s%s", code, out, errs)
	}
}

// TestKyvernoNamespaceObject: namespaceObject as Kyverno gives it: read by
// matchConditions too (the apiserver's matcher leaves it null there), and
// for a Namespace's own UPDATE the stored Namespace (the apiserver: null);
// its CREATE has none.
func TestKyvernoNamespaceObject(t *testing.T) {
	for _, tc := range []struct {
		op   string
		want []string
	}{
		{"CREATE", []string{
			"ConfigMap shop/sales  team-configmaps    pass",
			"ConfigMap shop/stray  team-configmaps    fail    Policy team-configmaps failed: configmaps in shop belong to team sales\n",
			"ConfigMap other/free  team-configmaps    skip    match conditions not met: team-namespace\n",
			"Namespace vault       locked-namespaces  pass",
		}},
		{"UPDATE", []string{
			"ConfigMap shop/stray  team-configmaps    fail    Policy team-configmaps failed: configmaps in shop belong to team sales\n",
			"Namespace vault       locked-namespaces  fail    Policy locked-namespaces failed: vault is locked\n",
		}},
	} {
		code, out, errs := run("check", "-c", "testdata/kyverno/namespaces.yaml", "-f", "testdata/kyverno/namespace-resources.yaml",
			"--namespaces", "testdata/kyverno/namespace-objects.yaml", "--operation", tc.op, "--old", "testdata/kyverno/namespace-resources.yaml", "--show-skipped")
		if code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s%s", tc.op, code, out, errs)
		}
		for _, want := range tc.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.op, want, out)
			}
		}
	}
}
