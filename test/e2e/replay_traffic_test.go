//go:build e2e

package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// replayTraffic is the scripted traffic of one phase: a, a namespace
// under the phase's policies; b, one with sidecar injection as well.
// Requests the policies deny are part of it: their errors are expected.
func replayTraffic(t *testing.T, a, b string) {
	t.Helper()
	c := context.Background()
	for _, ns := range []struct {
		name   string
		labels map[string]string
	}{{a, map[string]string{"replay-e2e": "yes"}}, {b, map[string]string{"replay-e2e": "yes", "sidecar-injection": "enabled"}}} {
		if err := ensureNamespace(ns.name, ns.labels); err != nil {
			t.Fatal(err)
		}
	}
	alice, bob, ci := as(t, "alice", "dev"), as(t, "bob", "ops"), as(t, "system:serviceaccount:"+a+":ci", "system:serviceaccounts")
	team := map[string]string{"team": "web"}
	cm := func(name string, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
	}
	create := metav1.CreateOptions{}
	steps := []func() error{
		func() error {
			_, err := alice.CoreV1().ConfigMaps(a).Create(c, cm("settings", team), create)
			return err
		},
		func() error { _, err := alice.CoreV1().ConfigMaps(a).Create(c, cm("orphan", nil), create); return err },
		func() error {
			_, err := ci.CoreV1().ConfigMaps(a).Create(c, cm("dry", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		},
		func() error {
			_, err := ci.CoreV1().ConfigMaps(a).Create(c, cm("protected", map[string]string{"team": "web", "protected": "true"}), create)
			return err
		},
		func() error { // an update that removes the label: denied
			got, err := bob.CoreV1().ConfigMaps(a).Get(c, "settings", metav1.GetOptions{})
			if err != nil {
				return err
			}
			got.Labels = nil
			_, err = bob.CoreV1().ConfigMaps(a).Update(c, got, metav1.UpdateOptions{})
			return err
		},
		func() error {
			_, err := bob.CoreV1().ConfigMaps(a).Patch(c, "settings", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"1"}}}`), metav1.PatchOptions{})
			return err
		},
		func() error { // a JSON patch that removes the label: denied, so replay applies it
			_, err := bob.CoreV1().ConfigMaps(a).Patch(c, "settings", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/labels/team"}]`), metav1.PatchOptions{})
			return err
		},
		func() error {
			_, err := alice.CoreV1().ConfigMaps(a).Patch(c, "settings", types.StrategicMergePatchType, []byte(`{"data":{"k":"w"}}`), metav1.PatchOptions{})
			return err
		},
		func() error { // logged at Metadata level: set aside by replay
			_, err := alice.CoreV1().Secrets(a).Create(c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token"}}, create)
			return err
		},
		func() error { _, err := ci.AppsV1().Deployments(a).Create(c, deployment("web", 2), create); return err },
		func() error {
			_, err := ci.AppsV1().Deployments(a).Patch(c, "web", types.MergePatchType, []byte(`{"spec":{"replicas":10}}`), metav1.PatchOptions{})
			return err
		},
		func() error {
			got, err := alice.AppsV1().Deployments(a).Get(c, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			got.Spec.Replicas = ptrTo(int32(3))
			_, err = alice.AppsV1().Deployments(a).Update(c, got, metav1.UpdateOptions{})
			return err
		},
		func() error {
			_, err := cluster.client.CoreV1().Pods(b).Create(c, framework.Pod("app", env("dev"), nil), create)
			return err
		},
		func() error {
			_, err := cluster.client.CoreV1().Pods(a).Create(c, framework.Pod("bare", nil, nil), create)
			return err
		},
		func() error { return execIn(c, bob, b, "app") },
		func() error { return execIn(c, alice, b, "app") },
		func() error {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
			_, err := alice.CoreV1().Services(a).Create(c, svc, create)
			return err
		},
		func() error { return bob.CoreV1().ConfigMaps(a).Delete(c, "protected", metav1.DeleteOptions{}) },
		func() error { return bob.CoreV1().ConfigMaps(a).Delete(c, "settings", metav1.DeleteOptions{}) },
		func() error {
			_, err := cluster.client.CoreV1().Pods(b).Patch(c, "app", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"environment":"prod"}}}`), metav1.PatchOptions{})
			return err
		},
		func() error { return cluster.client.CoreV1().Pods(b).Delete(c, "app", metav1.DeleteOptions{}) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Logf("%s step %d: %v", a, i+1, err)
		}
	}
}

// as is a client that impersonates user (with system:masters, so that
// only admission refuses it).
func as(t *testing.T, user, group string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(cluster.restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{group, "system:masters"}}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// execIn asks to exec into a Pod: admission decides the CONNECT; with no
// kubelet, an admitted one then fails to reach the Pod.
func execIn(c context.Context, client kubernetes.Interface, ns, pod string) error {
	return client.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod).SubResource("exec").
		Param("command", "ls").Param("stdout", "true").Param("container", "app").Do(c).Error()
}

func ptrTo[T any](v T) *T { return &v }
