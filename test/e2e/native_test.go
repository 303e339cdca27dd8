//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// compiledSet applies what `tollgate manifests --native` prints for docs,
// as a user would, and waits until it denies probe in ns. The objects are
// deleted when the test ends.
func compiledSet(t *testing.T, docs []byte, ns string, probe *corev1.Pod, client kubernetes.Interface, w *warnings) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(file, docs, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runTollgate(t, "manifests", "--native", "--config", file, "--namespace", ownNamespace)
	if code != 0 {
		t.Fatalf("manifests --native: exit %d\n%s", code, stderr)
	}
	if strings.Contains(stderr, "stays on the webhook") {
		t.Fatalf("a library policy is not compiled:\n%s", stderr)
	}
	managed := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=tollgate"}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = cluster.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().DeleteCollection(ctx, metav1.DeleteOptions{}, managed)
		_ = cluster.client.AdmissionregistrationV1().ValidatingAdmissionPolicies().DeleteCollection(ctx, metav1.DeleteOptions{}, managed)
	})
	applyNative(t, []byte(stdout))
	deadline := time.Now().Add(30 * time.Second)
	for createIn(context.Background(), t, client, w, ns, probe).allowed {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the compiled policies are not in effect after 30s", ns)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var vapDenial = regexp.MustCompile(`^ValidatingAdmissionPolicy '([^']+)\.tollgate\.dev' with binding '[^']+' denied request: (.*)$`)

// sameAsWebhook reports where the compiled policies (answer c) decided
// otherwise than tollgate's webhook (answer g): the outcome, and for a
// denial, the message, which must be the webhook's for the policy the
// apiserver names (the webhook joins every denying policy's by "; ").
func sameAsWebhook(name string, g, c answer, gk, ck string) string {
	if gk != ck {
		return fmt.Sprintf("%s: tollgate's webhook %s, compiled %s\n webhook:  %s\n compiled: %s", name, gk, ck, g.raw, c.raw)
	}
	if gk != "refused" {
		return ""
	}
	m := vapDenial.FindStringSubmatch(c.message)
	if m == nil {
		return fmt.Sprintf("%s: not a compiled policy's denial: %s", name, c.raw)
	}
	policy, msg := m[1], m[2]
	sep := " violates policy " + policy + ": "
	i := strings.Index(msg, sep)
	if i < 0 {
		return fmt.Sprintf("%s: the denial does not name policy %s: %s", name, policy, msg)
	}
	subject := msg[:i]
	for _, part := range strings.Split(g.message, "; "+subject+" violates policy ") {
		if !strings.HasPrefix(part, subject+" violates policy ") {
			part = subject + " violates policy " + part
		}
		if part == msg {
			return ""
		}
	}
	return fmt.Sprintf("%s: the compiled %s says what tollgate's webhook does not\n webhook:  %s\n compiled: %s", name, policy, g.message, msg)
}

// compiledAgrees creates obj in ns, under the compiled policies, and
// compares the answer with tollgate's webhook's (g, outcome gk). The
// apiserver loads VAPs through an informer, one by one: a difference is
// asked again for up to 10 seconds, so that only one that lasts is
// reported.
func compiledAgrees(ctx context.Context, t *testing.T, client kubernetes.Interface, w *warnings, ns string, obj runtime.Object, name string, g answer, gk string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := createIn(ctx, t, client, w, ns, obj)
		d := sameAsWebhook(name, g, c, gk, podSecurityOutcome(c, "ValidatingAdmissionPolicy '"))
		if d == "" || time.Now().After(deadline) {
			return d
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// asDeployment is p as a Deployment's template.
func asDeployment(p *corev1.Pod) *appsv1.Deployment {
	labels := map[string]string{"app": "corpus"}
	for k, v := range p.Labels {
		labels[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d" + p.Name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "corpus"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: p.Annotations},
				Spec:       *p.Spec.DeepCopy(),
			},
		},
	}
}
