//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/internal/imageverify/imageverifytest"
	"github.com/tollgate-dev/tollgate/internal/report"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestVerifyImages serves a verifyImages policy over a registry on
// loopback holding the images and signatures cosign wrote
// (imageverifytest): through a real kube-apiserver, a Pod whose image is
// signed by the policy's key (a signature tag, or a Sigstore bundle) is
// admitted, and a Deployment by its Pod template; an unsigned image, one
// signed by another key and one carrying another image's signature are
// denied, each naming the image, its field and why. In another namespace
// a policy needs only a provenance attestation from the CI builder: an
// image attested so and never signed is admitted, one without is denied.
// In a third, a keyless policy admits what a CI workflow signed under an
// in-memory Sigstore's trusted root, and denies another workflow's.
func TestVerifyImages(t *testing.T) {
	c := context.Background()
	const ns, attestNS, keylessNS = "img-shop", "img-attest", "img-keyless"
	for _, n := range []string{ns, attestNS, keylessNS} {
		if err := framework.EnsureNamespace(c, cluster.client, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	host := imageverifytest.Serve(t)
	docs := imageverifytest.Policy(t, "    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: "+ns+"}}\n", "", host+"/app*")
	attested := imageverifytest.Policy(t, "    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: "+attestNS+"}}\n", "", host+"/app*")
	attested = imageverifytest.WithProvenance(strings.Replace(attested, "name: signed-images", "name: attested-images", 1))
	docs += "---\n" + attested
	// Keyless: a CI workflow's certificates under an in-memory Sigstore.
	ss := imageverifytest.NewSigstore(t)
	keyless := imageverifytest.Empty(t)
	ss.Releases(t, keyless)
	docs += "---\n" + ss.KeylessPolicy(t, "    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: "+keylessNS+"}}\n", keyless)
	pod := func(name, image string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"environment": "dev"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
	}
	gone := func(ctx context.Context) error {
		_, err := cluster.client.CoreV1().Pods(ns).Create(ctx, pod("gone", host+"/app:unsigned"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	startTollgateWith(t, "tollgate-images", gone, []byte(docs))

	w := &warnings{}
	cfg := rest.CopyConfig(cluster.restConfig)
	cfg.WarningHandler = w
	client := kubernetes.NewForConfigOrDie(cfg)
	const prefix = `admission webhook "signed-images.validate.tollgate.dev" denied the request: `
	framework.WaitFor(t, 30*time.Second, "tollgate's verifyImages webhook in effect", func() bool {
		return strings.Contains(createIn(c, t, client, w, ns, pod("probe", host+"/app:unsigned")).raw, prefix)
	})
	replicas := int32(1)
	deployment := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"environment": "dev"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "environment": "dev"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: host + "/app:unsigned"}}}}}}
	for _, tc := range []struct {
		name   string
		obj    runtime.Object
		denial string // "" for allowed
	}{
		{"signature tag", pod("p", host+"/app:ecdsa-tag"), ""},
		{"bundle", pod("p", host+"/app:ecdsa-bundle"), ""},
		{"not selected", pod("p", host+"/other:both"), ""},
		{"unsigned", pod("p", host+"/app:unsigned"), `pod "p" violates policy signed-images: image ` + host + `/app:unsigned (spec.containers[0].image): no signature found (neither a signature tag nor a Sigstore bundle)`},
		{"another key", pod("p", host+"/app:rsa-tag"), `pod "p" violates policy signed-images: image ` + host + `/app:rsa-tag (spec.containers[0].image): no signature verified by attestor ci (tag sha256-`},
		{"another image's signature", pod("p", host+"/app:moved"), `the signed payload is for digest "sha256:`},
		{"deployment, unsigned template", deployment, `deployment "web" violates policy signed-images: image ` + host + `/app:unsigned (spec.template.spec.containers[0].image): no signature found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := createIn(c, t, client, w, ns, tc.obj)
			if a.allowed != (tc.denial == "") || !strings.Contains(a.message, tc.denial) {
				t.Fatalf("allowed %v, %q; want denial containing %q", a.allowed, a.raw, tc.denial)
			}
			if tc.denial != "" && (a.code != 403 || !strings.Contains(a.raw, prefix)) {
				t.Errorf("code %d, %q: want 403 from tollgate's webhook", a.code, a.raw)
			}
		})
	}
	framework.WaitFor(t, 30*time.Second, "the attestation policy's webhook in effect", func() bool {
		return strings.Contains(createIn(c, t, client, w, attestNS, pod("probe", host+"/app:unsigned")).raw, "attested-images.validate.tollgate.dev")
	})
	framework.WaitFor(t, 30*time.Second, "the keyless policy's webhook in effect", func() bool {
		return strings.Contains(createIn(c, t, client, w, keylessNS, pod("probe", keyless+"/app:fork")).raw, "released-images.validate.tollgate.dev")
	})
	for _, tc := range []struct {
		name, image, denial string
	}{
		{"keyless, the release workflow", keyless + "/app:release", ""},
		{"keyless, another workflow", keyless + "/app:fork", `pod "p" violates policy released-images: image ` + keyless + `/app:fork (spec.containers[0].image): no signature verified by attestor release`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := createIn(c, t, client, w, keylessNS, pod("p", tc.image))
			if a.allowed != (tc.denial == "") || !strings.Contains(a.message, tc.denial) {
				t.Fatalf("allowed %v, %q; want denial containing %q", a.allowed, a.raw, tc.denial)
			}
		})
	}
	for _, tc := range []struct {
		name, image, denial string
	}{
		{"attested, never signed", "app:attested-only", ""},
		{"no provenance", "app:rsa-tag", `pod "p" violates policy attested-images: image ` + host + `/app:rsa-tag (spec.containers[0].image): attestation provenance: no https://slsa.dev/provenance/v1 attestation verified by attestor ci`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := createIn(c, t, client, w, attestNS, pod("p", host+"/"+tc.image))
			if a.allowed != (tc.denial == "") || !strings.Contains(a.message, tc.denial) {
				t.Fatalf("allowed %v, %q; want denial containing %q", a.allowed, a.raw, tc.denial)
			}
		})
	}
}

// TestAuditVerifyImages: tollgate audit, as a user who may list Pods,
// reports stored Pods by their images' signatures: signed ones pass,
// naming the digest; one whose image has no signature fails, naming the
// image and why; a Pod whose image the policy does not select has no
// result.
func TestAuditVerifyImages(t *testing.T) {
	c := ctx(t)
	const ns = "img-audit"
	namespace(t, ns, nil)
	host := imageverifytest.Serve(t)
	for name, image := range map[string]string{"signed": "app:ecdsa-tag", "bundled": "app:ecdsa-bundle", "unsigned": "app:unsigned", "elsewhere": "other:both"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"environment": "dev"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: host + "/" + image}}}}
		if _, err := cluster.client.CoreV1().Pods(ns).Create(c, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	reader := userWith(t, "img-auditor", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "replicationcontrollers", "namespaces"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets", "statefulsets", "daemonsets"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: []string{"get", "list"}},
	})
	policies := filepath.Join(t.TempDir(), "signed.yaml")
	if err := os.WriteFile(policies, []byte(imageverifytest.Policy(t, "", "", host+"/app*")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runTollgate(t, "audit", "--kubeconfig", reader, "-c", policies, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a Pod fails): %s\n%s", code, stderr, out)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]string{}
	for _, res := range r.Results {
		if res.Policy == "signed-images" && res.Resources[0].Namespace == ns {
			got[res.Resources[0].Name] = string(res.Result) + ": " + res.Message
		}
	}
	want := map[string]string{
		"signed":   "pass: verified: " + host + "/app:ecdsa-tag@sha256:",
		"bundled":  "pass: verified: " + host + "/app:ecdsa-bundle@sha256:",
		"unsigned": `fail: pod "unsigned" violates policy signed-images: image ` + host + `/app:unsigned (spec.containers[0].image): no signature found`,
	}
	if len(got) != len(want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	for name, w := range want {
		if !strings.HasPrefix(got[name], w) {
			t.Errorf("%s: %q, want it to start with %q", name, got[name], w)
		}
	}
}

// TestVerifyImagesPullSecrets: a tollgate serving with
// --registry-credentials=pull-secrets reaches a registry that needs
// credentials with each Pod's imagePullSecrets, or its ServiceAccount's;
// a Pod with neither is denied by failurePolicy Fail, the registry's
// refusal said, unless the cache knows the image's verdict.
func TestVerifyImagesPullSecrets(t *testing.T) {
	c := context.Background()
	const ns = "img-private"
	if err := framework.EnsureNamespace(c, cluster.client, ns, nil); err != nil {
		t.Fatal(err)
	}
	host := imageverifytest.ServeAuth(t, "ci", "s3cret")
	dockerConfig := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, base64.StdEncoding.EncodeToString([]byte("ci:s3cret")))
	for _, name := range []string{"regcred", "builder-cred"} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(dockerConfig)}}
		if _, err := cluster.client.CoreV1().Secrets(ns).Create(c, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}, ImagePullSecrets: []corev1.LocalObjectReference{{Name: "builder-cred"}}}
	if _, err := cluster.client.CoreV1().ServiceAccounts(ns).Create(c, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	docs := imageverifytest.Policy(t, "    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: "+ns+"}}\n", "", host+"/app*")
	pod := func(name string, mutate func(*corev1.PodSpec)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"environment": "dev"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: host + "/app:ecdsa-tag"}}}}
		mutate(&p.Spec)
		return p
	}
	none := func(*corev1.PodSpec) {}
	gone := func(ctx context.Context) error {
		_, err := cluster.client.CoreV1().Pods(ns).Create(ctx, pod("gone", none), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	serveAndRegister(t, "tollgate-pullsecrets", gone, []byte(docs), "--kubeconfig", cluster.kubeconfig, "--registry-credentials=pull-secrets")
	w := &warnings{}
	cfg := rest.CopyConfig(cluster.restConfig)
	cfg.WarningHandler = w
	client := kubernetes.NewForConfigOrDie(cfg)
	framework.WaitFor(t, 30*time.Second, "tollgate's verifyImages webhook in effect", func() bool {
		return strings.Contains(createIn(c, t, client, w, ns, pod("probe", none)).raw, "signed-images.validate.tollgate.dev")
	})
	for _, tc := range []struct {
		name   string
		spec   func(*corev1.PodSpec)
		denial string
	}{
		{"imagePullSecrets", func(s *corev1.PodSpec) { s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}} }, ""},
		{"the ServiceAccount's", func(s *corev1.PodSpec) { s.ServiceAccountName = "builder" }, ""},
		// Another image: a digest verified once is verified for every Pod
		// (the verdict is the image's), so the cache would answer.
		{"no credentials", func(s *corev1.PodSpec) { s.Containers[0].Image = host + "/app:ecdsa-bundle" },
			`pod "p": policy signed-images could not be evaluated: image ` + host + `/app:ecdsa-bundle (spec.containers[0].image): resolving`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := createIn(c, t, client, w, ns, pod("p", tc.spec))
			if a.allowed != (tc.denial == "") || !strings.Contains(a.message, tc.denial) {
				t.Fatalf("allowed %v, %q; want denial containing %q", a.allowed, a.raw, tc.denial)
			}
			if tc.denial != "" && !strings.Contains(a.message, "401 Unauthorized") {
				t.Errorf("%q: want the registry's refusal said", a.message)
			}
		})
	}
}
