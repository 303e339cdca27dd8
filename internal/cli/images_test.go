package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/imageverify/imageverifytest"
)

// imageFiles writes a verifyImages policy on host's app repository (the
// recording's ecdsa key) and manifests naming host's images.
func imageFiles(t *testing.T, host string) (policies, manifests string) {
	t.Helper()
	dir := t.TempDir()
	policies = write(t, dir, "policies.yaml", imageverifytest.Policy(t, "", "", host+"/app*")+`---
apiVersion: tollgate.dev/v1alpha1
kind: PolicyException
metadata: {name: legacy}
spec:
  policies: [signed-images]
  match: {names: ["legacy-*"]}
  reason: built before signing (PLAT-9)
`)
	manifests = write(t, dir, "manifests.yaml", fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: %[1]s/app:ecdsa-tag}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: shop}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: job, image: %[1]s/app:ecdsa-bundle}]
---
apiVersion: v1
kind: Pod
metadata: {name: unsigned, namespace: shop}
spec:
  initContainers: [{name: init, image: %[1]s/app:unsigned}]
  containers: [{name: app, image: %[1]s/app:ecdsa-tag}]
---
apiVersion: v1
kind: Pod
metadata: {name: elsewhere, namespace: shop}
spec:
  containers: [{name: app, image: %[1]s/other:both}]
---
apiVersion: v1
kind: Pod
metadata: {name: legacy-app, namespace: shop}
spec:
  containers: [{name: app, image: %[1]s/app:unsigned}]
`, host))
	return policies, manifests
}

// TestVerifyImagesCheck: tollgate check on workloads naming images of a
// registry: signed ones pass, naming the digest and the attestor; an
// unsigned init container fails the Pod; an image the policy does not
// select leaves no result; a PolicyException lifts the policy.
func TestVerifyImagesCheck(t *testing.T) {
	host := imageverifytest.Serve(t)
	policies, manifests := imageFiles(t, host)
	code, out, errs := run("check", "-c", policies, "-f", manifests, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	var report struct {
		Results []struct {
			Policy, Result, Message string
			Resources               []struct{ Kind, Name string }
		}
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got []string
	for _, r := range report.Results {
		for _, o := range r.Resources {
			got = append(got, o.Kind+"/"+o.Name+" "+r.Result+": "+strings.ReplaceAll(r.Message, host, "HOST"))
		}
	}
	slices.Sort(got)
	want := []string{"CronJob/nightly pass: verified: HOST/app:ecdsa-bundle@sha256:", "Deployment/web pass: verified: HOST/app:ecdsa-tag@sha256:",
		"Pod/legacy-app skip: exempted by PolicyException legacy: built before signing (PLAT-9)",
		`Pod/unsigned fail: pod "unsigned" violates policy signed-images: image HOST/app:unsigned (spec.initContainers[0].image): no signature found (neither a signature tag nor a Sigstore bundle)`}
	if len(got) != len(want) {
		t.Fatalf("results %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("result %q, want it to start with %q", got[i], want[i])
		}
	}
}

// TestVerifyImagesRegistryDown: with the registry gone, check fails the
// objects the policy selects (failurePolicy Fail), saying why, and exits 1.
func TestVerifyImagesRegistryDown(t *testing.T) {
	policies, manifests := imageFiles(t, "127.0.0.1:1")
	code, out, errs := run("check", "-c", policies, "-f", manifests)
	if code != 1 || !strings.Contains(out, "could not be evaluated: image 127.0.0.1:1/app:ecdsa-tag (spec.template.spec.containers[0].image): resolving") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

// TestVerifyImagesAttestationsCheck: tollgate check with a policy that
// needs only a SLSA provenance attestation from the CI builder: images
// attested so pass, in either form and signed or not; others fail,
// saying which attestation is missing.
func TestVerifyImagesAttestationsCheck(t *testing.T) {
	host := imageverifytest.Serve(t)
	dir := t.TempDir()
	policy := imageverifytest.WithProvenance(imageverifytest.Policy(t, "", "", host+"/*"))
	policies := write(t, dir, "policies.yaml", policy)
	var pods []string
	for _, image := range []string{"app:ecdsa-tag", "app:attested-only", "other:both", "app:rsa-bundle", "app:unsigned"} {
		name := strings.NewReplacer("app:", "", ":", "-").Replace(image)
		pods = append(pods, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: shop}\nspec:\n  containers: [{name: app, image: %s/%s}]\n", name, host, image))
	}
	manifests := write(t, dir, "pods.yaml", strings.Join(pods, "---\n"))
	code, out, errs := run("check", "-c", policies, "-f", manifests)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	out = strings.ReplaceAll(out, host, "HOST")
	for _, want := range []string{
		`pod "rsa-bundle" violates policy signed-images: image HOST/app:rsa-bundle (spec.containers[0].image): attestation provenance: no https://slsa.dev/provenance/v1 attestation verified by attestor ci`,
		`pod "unsigned" violates policy signed-images: image HOST/app:unsigned (spec.containers[0].image): no signature or attestation found`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, passed := range []string{"ecdsa-tag", "attested-only", "other-both"} {
		if strings.Contains(out, `pod "`+passed+`" violates`) {
			t.Errorf("pod %s refused:\n%s", passed, out)
		}
	}
	if got := strings.Count(out, "violates policy"); got != 2 {
		t.Errorf("%d violations, want 2:\n%s", got, out)
	}
}

// TestVerifyImagesKeylessCheck: tollgate check with a keyless attestor
// (a CI workflow's identity under a Sigstore trusted root): an image the
// workflow signed passes; one signed by another workflow fails, saying
// whose certificate it was.
func TestVerifyImagesKeylessCheck(t *testing.T) {
	host := imageverifytest.Empty(t)
	ss := imageverifytest.NewSigstore(t)
	ss.Releases(t, host)
	dir := t.TempDir()
	policies := write(t, dir, "policies.yaml", ss.KeylessPolicy(t, "", host))
	manifests := write(t, dir, "pods.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: release, namespace: shop}
spec:
  containers: [{name: app, image: %[1]s/app:release}]
---
apiVersion: v1
kind: Pod
metadata: {name: fork, namespace: shop}
spec:
  containers: [{name: app, image: %[1]s/app:fork}]
`, host))
	code, out, errs := run("check", "-c", policies, "-f", manifests)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	out = strings.ReplaceAll(out, host, "HOST")
	for _, want := range []string{
		"Pod shop/release  released-images  pass    verified: HOST/app:release@sha256:",
		`pod "fork" violates policy released-images: image HOST/app:fork (spec.containers[0].image): no signature verified by attestor release`,
		`got "https://github.com/example/fork/.github/workflows/release.yml@refs/heads/main"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestVerifyImagesRegistryCA: tollgate check reaches a registry over TLS
// with --registry-ca-file, and without it says the certificate's
// authority is unknown (failurePolicy Fail: the object fails).
func TestVerifyImagesRegistryCA(t *testing.T) {
	host, caPEM := imageverifytest.ServeTLS(t)
	policies, manifests := imageFiles(t, host)
	ca := write(t, t.TempDir(), "ca.pem", string(caPEM))
	code, out, errs := run("check", "-c", policies, "-f", manifests, "--registry-ca-file", ca)
	if code != 1 || !strings.Contains(out, "Deployment shop/web") || !strings.Contains(out, "verified: "+host+"/app:ecdsa-tag@sha256:") {
		t.Fatalf("with the CA: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run("check", "-c", policies, "-f", manifests)
	if code != 1 || !strings.Contains(out, "certificate signed by unknown authority") {
		t.Fatalf("without the CA: exit %d\n%s%s", code, out, errs)
	}
}
