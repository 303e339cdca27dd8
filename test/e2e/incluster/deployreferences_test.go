//go:build e2e

package incluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestReferencesWithDeployRBAC loads two of the library's reference
// policies into the deployed replicas, which run with deploy/'s RBAC and
// deploy/references applied as a user applies it: a duplicate Ingress host
// and an image pull Secret that does not exist are denied, and the Secret,
// once created, is found (Secrets are read metadata-only). Without
// deploy/references, the requests are errors naming what tollgate may not
// list.
func TestReferencesWithDeployRBAC(t *testing.T) {
	ctx := context.Background()
	const space = "e2e-references"
	if err := framework.EnsureNamespace(ctx, env.client, space, nil); err != nil {
		t.Fatal(err)
	}
	ingresses := env.client.NetworkingV1().Ingresses(space)
	taken := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "taken"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "taken.e2e.example"}}}}
	if _, err := ingresses.Create(ctx, taken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ingresses.Delete(ctx, "taken", metav1.DeleteOptions{}) })
	duplicate := taken.DeepCopy()
	duplicate.Name = "copy"
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	createCopy := func() error { _, err := ingresses.Create(ctx, duplicate, dryRun); return err }
	pod := framework.Pod("pulls", map[string]string{"environment": "dev"}, nil)
	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}}
	createPod := func() error { _, err := env.client.CoreV1().Pods(space).Create(ctx, pod, dryRun); return err }

	files := []string{"unique-ingress-host.yaml", "require-existing-pod-references.yaml"}
	for _, name := range files {
		doc, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "policies", "references", name))
		if err != nil {
			t.Fatal(err)
		}
		writePolicyFile(t, "references-"+name, string(doc))
	}
	t.Cleanup(func() {
		for _, name := range files {
			_ = os.Remove(filepath.Join(env.policies, "references-"+name))
		}
		framework.WaitFor(t, 30*time.Second, "the reference policies unloaded", func() bool { return createCopy() == nil })
	})
	framework.WaitFor(t, 30*time.Second, "a duplicate host denied, naming what tollgate may not list", func() bool {
		err := createCopy()
		return err != nil && strings.Contains(err.Error(), "tollgate may not list ingresses.networking.k8s.io")
	})
	framework.WaitFor(t, 30*time.Second, "a Pod with an image pull Secret denied, naming Secrets", func() bool {
		err := createPod()
		return err != nil && strings.Contains(err.Error(), "tollgate may not list secrets")
	})

	kubectl := func(args ...string) {
		t.Helper()
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", env.adminKubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	refsDir := filepath.Join(framework.RepoRoot(), "deploy", "references")
	kubectl("apply", "--server-side", "-k", refsDir)
	t.Cleanup(func() { kubectl("delete", "-k", refsDir) })
	took := framework.WaitFor(t, 90*time.Second, "a duplicate host denied by the policy", func() bool {
		err := createCopy()
		return err != nil && strings.Contains(err.Error(), "violates policy unique-ingress-host") && strings.Contains(err.Error(), space+"/taken")
	})
	t.Logf("deploy/references applied: the replicas list Ingresses and deny a duplicate %s later", took.Round(10*time.Millisecond))
	framework.WaitFor(t, 30*time.Second, "a missing image pull Secret denied", func() bool {
		err := createPod()
		return err != nil && strings.Contains(err.Error(), "image pull secret regcred does not exist in namespace "+space)
	})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "regcred"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}}
	if _, err := env.client.CoreV1().Secrets(space).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.client.CoreV1().Secrets(space).Delete(ctx, "regcred", metav1.DeleteOptions{}) })
	took = framework.WaitFor(t, 30*time.Second, "the Pod admitted once its Secret exists", func() bool { return createPod() == nil })
	t.Logf("Secret created: the Pod admitted %s later", took.Round(time.Millisecond))
}
