//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestLaterMutationAfterInjection: tollgate's injection webhook is
// registered with reinvocationPolicy Never. A mutation the apiserver makes
// after it (a MutatingAdmissionPolicy adding a container and an annotation
// to injected Pods, run when the apiserver reinvokes its plugins because
// tollgate changed the Pod) stays, and so do the sidecar, once, and the
// status annotation; tollgate reviews each Pod once on its mutate path. An
// opted-out Pod stays without the sidecar.
func TestLaterMutationAfterInjection(t *testing.T) {
	requireMAPServed(t)
	docs, err := os.ReadFile("testdata/late-container.yaml")
	if err != nil {
		t.Fatal(err)
	}
	applyNative(t, docs)
	t.Cleanup(func() {
		c := context.Background()
		_ = cluster.client.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Delete(c, "late-container", metav1.DeleteOptions{})
		_ = cluster.client.AdmissionregistrationV1().MutatingAdmissionPolicies().Delete(c, "late-container", metav1.DeleteOptions{})
	})
	labels := map[string]string{"sidecar-injection": "enabled", "late-container": "on"}
	ns := namespace(t, "e2e-late", labels)
	// The apiserver loads policies asynchronously.
	framework.WaitFor(t, 60*time.Second, "the late-container policy", func() bool {
		p := pod("probe", env("dev"), nil)
		got, err := cluster.client.CoreV1().Pods(ns).Create(ctx(t), p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && slices.Contains(containerNames(got.Spec.Containers), "late")
	})

	got := createPod(t, ns, pod("late-1", env("dev"), nil))
	if names := containerNames(got.Spec.Containers); !slices.Equal(names, []string{"app", "sidecar-nginx", "late"}) {
		t.Errorf("containers = %v, want [app sidecar-nginx late]", names)
	}
	if got.Annotations["tollgate.dev/status"] != "nginx-sidecar" || got.Annotations["example.com/late"] != "added" {
		t.Errorf("annotations = %v, want tollgate.dev/status=nginx-sidecar and example.com/late=added", got.Annotations)
	}
	// tollgate logs a review once it has answered it.
	framework.WaitFor(t, 5*time.Second, "tollgate's log of late-1", func() bool { return mutateReviews(t, ns, "late-1") > 0 })
	if n := mutateReviews(t, ns, "late-1"); n != 1 {
		t.Errorf("tollgate reviewed late-1 %d times on its mutate path, want once (reinvocationPolicy Never)", n)
	}

	out := createPod(t, ns, pod("late-opted-out", env("dev"), map[string]string{"tollgate.dev/inject": "false"}))
	if names := containerNames(out.Spec.Containers); !slices.Equal(names, []string{"app"}) {
		t.Errorf("opted-out pod containers = %v, want [app]", names)
	}
	if _, ok := out.Annotations["tollgate.dev/status"]; ok {
		t.Errorf("opted-out pod has a status annotation: %v", out.Annotations)
	}
}

// mutateReviews counts the reviews tollgate logged for a Pod on its
// injection path.
func mutateReviews(t *testing.T, ns, name string) int {
	t.Helper()
	data, err := os.ReadFile(cluster.logFile)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(line, []byte(`"msg":"review"`)) && bytes.Contains(line, []byte(`"path":"/mutate/nginx-sidecar"`)) &&
			bytes.Contains(line, []byte(`"namespace":"`+ns+`"`)) && bytes.Contains(line, []byte(`"name":"`+name+`"`)) && bytes.Contains(line, []byte(`"dryRun":false`)) {
			n++
		}
	}
	return n
}
