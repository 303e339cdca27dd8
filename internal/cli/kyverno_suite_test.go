package cli

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unpackCorpus writes the files of test/corpus/<project>/<sub> (stored
// gzipped, see test/corpus) under dir/<sub>, as their repository has them.
func unpackCorpus(t *testing.T, dir, project, sub string) {
	t.Helper()
	root := filepath.Join("..", "..", "test", "corpus", project)
	err := filepath.WalkDir(filepath.Join(root, sub), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".gz") {
			return err
		}
		gz, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			return err
		}
		data, err := io.ReadAll(zr)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, strings.TrimSuffix(p, ".gz"))
		if err != nil {
			return err
		}
		out := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTestKyvernoSuites: tollgate test runs Kyverno's published suites
// (kyverno-test.yaml) as they are, beside tollgate's own, and prints them
// as it prints its own.
func TestTestKyvernoSuites(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []struct{ project, sub string }{
		{"kyverno-policies", "pod-security-vpol/restricted/require-run-as-nonroot"},
		{"kyverno-policies", "best-practices-vpol/disallow-default-namespace"}, // namespaces in its values
		{"kyverno-policies", "other-vpol/limit-hostpath-vols"},                 // request.operation in its values
		{"kyverno", "test/cli/test-validating-policy/exceptions-check-deployment-labels"},
	} {
		unpackCorpus(t, dir, s.project, s.sub)
	}
	// A suite of tollgate's beside them, on one of Kyverno's policies.
	own := "apiVersion: tollgate.dev/v1alpha1\nkind: Test\nmetadata: {name: own}\n" +
		"policies: [other-vpol/limit-hostpath-vols/limit-hostpath-vols.yaml]\nresources: [other-vpol/limit-hostpath-vols/.kyverno-test/badpod.yaml]\n" +
		"results: [{policy: limit-hostpath-vols, resources: [bad-pods-all], result: warn}]\n"
	if err := os.WriteFile(filepath.Join(dir, "tollgate-test.yaml"), []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run("test", dir)
	if code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	suite := func(p string) string { return filepath.Join(dir, p, ".kyverno-test", "kyverno-test.yaml") }
	for _, want := range []string{
		"ok   " + suite("pod-security-vpol/restricted/require-run-as-nonroot") + ": require-run-as-nonroot Pod default/badpod01: fail\n",
		"ok   " + suite("pod-security-vpol/restricted/require-run-as-nonroot") + ": require-run-as-nonroot Deployment default/gooddeployment01: pass\n",
		"ok   " + suite("best-practices-vpol/disallow-default-namespace") + ": disallow-default-namespace Pod default/badpod01: fail\n",
		"ok   " + suite("other-vpol/limit-hostpath-vols") + ": limit-hostpath-vols Pod default/bad-pods-all (UPDATE): fail\n",
		"ok   " + filepath.Join(dir, "test/cli/test-validating-policy/exceptions-check-deployment-labels/kyverno-test.yaml") + ": check-deployment-labels Deployment test-ns/skipped-deployment: skip\n",
		"ok   " + filepath.Join(dir, "tollgate-test.yaml") + ": limit-hostpath-vols bad-pods-all: warn\n",
		"\n5 suites, ",
		" checks, 0 failed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestTestKyvernoDisagreements: where tollgate decides otherwise than
// Kyverno's suite expects (objects in kube-system, which tollgate never
// validates), tollgate test fails and says why.
func TestTestKyvernoDisagreements(t *testing.T) {
	dir := t.TempDir()
	unpackCorpus(t, dir, "kyverno-policies", "other-vpol/pdb-maxunavailable")
	code, out, errs := run("test", dir)
	if code != exitDenied {
		t.Fatalf("exit %d, want %d:\n%s%s", code, exitDenied, out, errs)
	}
	for _, want := range []string{
		": pdb-maxunavailable PodDisruptionBudget kube-system/bad-pdb-zero: skip\n" +
			"     want fail, got skip (the policy does not apply to this resource: namespace kube-system is exempt)\n",
		"\n1 suites, ",
		" checks, 4 failed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestTestKyvernoUnsupported: a Kyverno suite asking for what tollgate
// cannot do stops tollgate test (exit 2), naming the field.
func TestTestKyvernoUnsupported(t *testing.T) {
	dir := t.TempDir()
	unpackCorpus(t, dir, "kyverno-policies", "best-practices-vpol/disallow-latest-tag")
	file := filepath.Join(dir, "best-practices-vpol", "disallow-latest-tag", ".kyverno-test", "kyverno-test.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("  result: fail\n"), []byte("  result: fail\n  patchedResources: patched.yaml\n"), 1)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run("test", dir)
	if want := file + ": results[0].patchedResources: not supported by tollgate test"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, want 2 and %q:\n%s%s", code, want, out, errs)
	}
}
