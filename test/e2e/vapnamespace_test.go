//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestVAPNamespaceObject: policies reading namespaceObject, natively, through
// tollgate with cluster access (answers equal to the apiserver's) and
// through a tollgate without it, which cannot know the namespace: there the
// policy's failurePolicy decides, Fail denying with an error naming what
// tollgate needs, Ignore admitting. Never "does not apply".
func TestVAPNamespaceObject(t *testing.T) {
	ctx := context.Background()
	template, err := os.ReadFile("testdata/vap-namespace-object.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"native", "tollgate", "offline"} {
		if err := framework.EnsureNamespace(ctx, cluster.client, "nsobj-"+side, map[string]string{"nsobj": side, "tier": "gold"}); err != nil {
			t.Fatal(err)
		}
	}
	docs := func(side string) []byte { return bytes.ReplaceAll(template, []byte("PLACEHOLDER"), []byte(side)) }
	applyNative(t, docs("native"))
	t.Cleanup(func() {
		for _, n := range []string{"tier-configmaps", "tier-secrets"} {
			_ = cluster.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, n+"-binding", metav1.DeleteOptions{})
			_ = cluster.client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, n, metav1.DeleteOptions{})
		}
	})
	gone := func(ns string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := cluster.client.CoreV1().ConfigMaps(ns).Create(ctx, configMap("gone", 3), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}
	startTollgateWith(t, "tollgate-nsobj", gone("nsobj-tollgate"), docs("tollgate"))
	startTollgateWithout(t, "tollgate-nsobj-offline", gone("nsobj-offline"), docs("offline"))

	w := &warnings{}
	cfg := rest.CopyConfig(cluster.restConfig)
	cfg.WarningHandler = w
	client := kubernetes.NewForConfigOrDie(cfg)
	unknown := `namespaceObject: namespace "nsobj-offline" unknown: run with --kubeconfig or give the Namespace object`
	// Wait until every side enforces: natively each policy loads on its own.
	for ns, probes := range map[string]map[runtime.Object]string{
		"nsobj-native":   {configMap("probe", 2): "allows at most 1 key", basicAuth("probe"): "only Opaque secrets"},
		"nsobj-tollgate": {configMap("probe", 2): "allows at most 1 key", basicAuth("probe"): "only Opaque secrets"},
		"nsobj-offline":  {configMap("probe", 0): unknown},
	} {
		for obj, want := range probes {
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				if a := createIn(ctx, t, client, w, ns, obj); strings.Contains(a.message, want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: %T policy not in effect after 30s", ns, obj)
				}
			}
		}
	}

	corpus := []runtime.Object{configMap("none", 0), configMap("one", 1), configMap("two", 2), configMap("five", 5),
		opaque("opaque"), basicAuth("basic-auth")}
	withCluster, failDenied, ignoreAdmitted := 0, 0, 0
	for _, obj := range corpus {
		name := fmt.Sprintf("%T %s", obj, obj.(metav1.Object).GetName())
		native := createIn(ctx, t, client, w, "nsobj-native", obj)
		through := createIn(ctx, t, client, w, "nsobj-tollgate", obj)
		if native.allowed != through.allowed || native.code != through.code || native.message != through.message || strings.Join(native.warnings, "\n") != strings.Join(through.warnings, "\n") {
			t.Errorf("%s:\n native:   allowed=%v code=%d %q %q\n tollgate: allowed=%v code=%d %q %q", name,
				native.allowed, native.code, native.message, native.warnings, through.allowed, through.code, through.message, through.warnings)
		} else {
			withCluster++
		}
		offline := createIn(ctx, t, client, w, "nsobj-offline", obj)
		switch obj.(type) {
		case *corev1.ConfigMap: // failurePolicy Fail
			want := "ValidatingAdmissionPolicy 'tier-configmaps' with binding 'tier-configmaps-binding' denied request: " + unknown
			if offline.allowed || offline.code != 422 || offline.message != want {
				t.Errorf("%s without cluster access: allowed=%v code=%d %q\n want denied, 422, %q", name, offline.allowed, offline.code, offline.message, want)
			} else {
				failDenied++
			}
		case *corev1.Secret: // failurePolicy Ignore
			if !offline.allowed {
				t.Errorf("%s without cluster access (failurePolicy Ignore): denied %q", name, offline.message)
			} else {
				ignoreAdmitted++
			}
		}
	}
	t.Logf("namespaceObject corpus: %d objects, 2 policies: with cluster access %d equal to the apiserver; without, %d denied by failurePolicy Fail naming what is needed, %d admitted by failurePolicy Ignore",
		len(corpus), withCluster, failDenied, ignoreAdmitted)
}

func configMap(name string, keys int) *corev1.ConfigMap {
	data := map[string]string{}
	for i := range keys {
		data[fmt.Sprintf("k%d", i)] = "v"
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

func opaque(name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"token": []byte("x")}}
}

func basicAuth(name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}
}
