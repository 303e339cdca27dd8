//go:build e2e

package e2e

import (
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMissingEnvironmentIsDenied(t *testing.T) {
	ns := namespace(t, "e2e-plain", nil)
	_, err := cluster.client.CoreV1().Pods(ns).Create(ctx(t), pod("no-env", map[string]string{"app": "web"}, nil), metav1.CreateOptions{})
	wantDenied(t, err, `pod "no-env" violates policy require-environment: label "environment" is missing; it must be one of [dev, prod]`)
}

func TestWrongEnvironmentIsDenied(t *testing.T) {
	ns := namespace(t, "e2e-plain", nil)
	_, err := cluster.client.CoreV1().Pods(ns).Create(ctx(t), pod("web-1-staging", env("staging"), nil), metav1.CreateOptions{})
	wantDenied(t, err, `pod "web-1-staging" violates policy require-environment: label "environment" must be one of [dev, prod], got "staging"`)
}

func TestDeniedInInjectionNamespaceToo(t *testing.T) {
	ns := namespace(t, "e2e-inject", injectionEnabled)
	_, err := cluster.client.CoreV1().Pods(ns).Create(ctx(t), pod("no-env", nil, nil), metav1.CreateOptions{})
	wantDenied(t, err, `label "environment" is missing`)
}

func TestRemovingLabelOnUpdateIsDenied(t *testing.T) {
	ns := namespace(t, "e2e-plain", nil)
	got := createPod(t, ns, pod("relabel", env("prod"), nil))
	delete(got.Labels, "environment")
	_, err := cluster.client.CoreV1().Pods(ns).Update(ctx(t), got, metav1.UpdateOptions{})
	wantDenied(t, err, `pod "relabel" violates policy require-environment`, "is missing")
}

func TestDeleteIsNotBlocked(t *testing.T) {
	ns := namespace(t, "e2e-plain", nil)
	createPod(t, ns, pod("doomed", env("dev"), nil))
	if err := cluster.client.CoreV1().Pods(ns).Delete(ctx(t), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

func TestSystemAndOwnNamespacesAreExempt(t *testing.T) {
	for _, ns := range []string{"kube-system", ownNamespace} {
		namespace(t, ns, injectionEnabled)
		got, err := cluster.client.CoreV1().Pods(ns).Create(ctx(t), pod("unlabeled", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Errorf("%s: pod without labels denied: %v", ns, err)
			continue
		}
		if n := count(got.Spec.Containers, isSidecar); n != 0 {
			t.Errorf("%s: pod injected (%d sidecars) in an exempt namespace", ns, n)
		}
	}
}

func TestOtherKindsAreNotConcerned(t *testing.T) {
	ns := namespace(t, "e2e-plain", nil)
	replicas := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "no-labels"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
				Spec:       pod("", nil, nil).Spec,
			},
		},
	}
	if _, err := cluster.client.AppsV1().Deployments(ns).Create(ctx(t), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a Deployment is no label policy's concern: %v", err)
	}
}

// TestOnlyTheApiserverIsAnswered: every other test reaches tollgate through
// the apiserver, which presents its client certificate; a client without
// one is refused.
func TestOnlyTheApiserverIsAnswered(t *testing.T) {
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}`
	resp, err := httpsClient().Post("https://"+cluster.addr+"/validate/require-environment", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a review without a client certificate got %d, want 401", resp.StatusCode)
	}
}
