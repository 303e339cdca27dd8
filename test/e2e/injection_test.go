//go:build e2e

package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

var injectionEnabled = map[string]string{"sidecar-injection": "enabled"}

var isSidecar = framework.IsSidecar

func TestLabeledNamespaceGetsWholeSidecar(t *testing.T) {
	ns := namespace(t, "e2e-inject", injectionEnabled)
	own := map[string]string{"team.example.com/owner": "payments", "note": "kept"}
	got := createPod(t, ns, pod("web-1", env("dev"), own))

	if names := containerNames(got.Spec.Containers); len(names) != 2 || names[0] != "app" || names[1] != "sidecar-nginx" {
		t.Fatalf("containers = %v, want [app sidecar-nginx]", names)
	}
	side := got.Spec.Containers[1]
	if side.Image != "nginx:1.12.2" || side.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("sidecar image %q pull policy %q, want nginx:1.12.2 IfNotPresent", side.Image, side.ImagePullPolicy)
	}
	// The ServiceAccount plugin is reinvoked after a webhook adds a container
	// and gives it the token mount too; the policy's own mount must be there once.
	if n := count(side.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "nginx-conf" && m.MountPath == "/etc/nginx" }); n != 1 {
		t.Errorf("sidecar volumeMounts = %+v, want nginx-conf at /etc/nginx once", side.VolumeMounts)
	}
	if len(side.Ports) != 1 || side.Ports[0].ContainerPort != 80 {
		t.Errorf("sidecar ports = %+v, want 80", side.Ports)
	}
	var conf *corev1.Volume
	apiAccess := 0
	for i, v := range got.Spec.Volumes {
		if v.Name == "nginx-conf" {
			conf = &got.Spec.Volumes[i]
		}
		if v.Projected != nil {
			apiAccess++ // kube-api-access-*, added by the ServiceAccount plugin before webhooks
		}
	}
	if conf == nil || conf.ConfigMap == nil || conf.ConfigMap.Name != "nginx-configmap" {
		t.Errorf("volumes = %+v, want nginx-conf from ConfigMap nginx-configmap", got.Spec.Volumes)
	}
	if apiAccess != 1 {
		t.Errorf("the ServiceAccount volume was lost or doubled: %d projected volumes", apiAccess)
	}
	for k, v := range own {
		if got.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q (existing annotations must be kept)", k, got.Annotations[k], v)
		}
	}
	if got.Annotations["tollgate.dev/status"] != "nginx-sidecar" {
		t.Errorf("status annotation = %q, want nginx-sidecar", got.Annotations["tollgate.dev/status"])
	}
}

func TestGenerateNamePodIsInjected(t *testing.T) {
	ns := namespace(t, "e2e-inject", injectionEnabled)
	p := pod("", env("prod"), nil)
	p.GenerateName = "worker-"
	got := createPod(t, ns, p)
	if n := count(got.Spec.Containers, isSidecar); n != 1 {
		t.Errorf("pod %s has %d sidecars, want 1", got.Name, n)
	}
	if got.Annotations["tollgate.dev/status"] != "nginx-sidecar" {
		t.Errorf("status annotation = %q (a pod with no annotations gets the map created)", got.Annotations["tollgate.dev/status"])
	}
}

func TestUnlabeledNamespaceIsUntouched(t *testing.T) {
	ns := namespace(t, "e2e-plain", nil)
	got := createPod(t, ns, pod("web-1", env("dev"), nil))
	if names := containerNames(got.Spec.Containers); len(names) != 1 {
		t.Errorf("containers = %v, want only the pod's own", names)
	}
	if _, ok := got.Annotations["tollgate.dev/status"]; ok {
		t.Error("status annotation set on a pod that was not injected")
	}
}

func TestOptOutAnnotation(t *testing.T) {
	ns := namespace(t, "e2e-inject", injectionEnabled)
	for i, v := range []string{"false", "Off", "NO"} {
		got := createPod(t, ns, pod("opted-out-"+string(rune('a'+i)), env("dev"), map[string]string{"tollgate.dev/inject": v}))
		if n := count(got.Spec.Containers, isSidecar); n != 0 {
			t.Errorf("tollgate.dev/inject=%q: %d sidecars, want none", v, n)
		}
	}
}

func TestUpdateKeepsExactlyOneSidecar(t *testing.T) {
	ns := namespace(t, "e2e-inject", injectionEnabled)
	got := createPod(t, ns, pod("updated", env("dev"), nil))
	got.Labels["version"] = "2"
	got.Annotations["touched"] = "yes"
	updated, err := cluster.client.CoreV1().Pods(ns).Update(ctx(t), got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if n := count(updated.Spec.Containers, isSidecar); n != 1 {
		t.Errorf("after update: %d sidecars, want 1", n)
	}
	if n := count(updated.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "nginx-conf" }); n != 1 {
		t.Errorf("after update: %d nginx-conf volumes, want 1", n)
	}
}

func TestServerSideDryRunShowsInjection(t *testing.T) {
	ns := namespace(t, "e2e-inject", injectionEnabled)
	got, err := cluster.client.CoreV1().Pods(ns).Create(ctx(t), pod("dry", env("dev"), nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	if n := count(got.Spec.Containers, isSidecar); n != 1 {
		t.Errorf("dry run shows %d sidecars, want 1", n)
	}
	if _, err := cluster.client.CoreV1().Pods(ns).Get(ctx(t), "dry", metav1.GetOptions{}); err == nil {
		t.Error("a dry-run pod was stored")
	}
}
