//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// optOutPolicy injects a proxy that Pods may refuse only in namespaces their
// administrators labelled tollgate.dev/allow-opt-out=true.
const optOutPolicy = `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata:
  name: mandatory-proxy
spec:
  match:
    resources: [pods]
    namespaceSelector:
      matchLabels:
        e2e-optout: enabled
  inject:
    containers:
    - name: proxy
      image: envoyproxy/envoy:v1.31.0
    optOut:
      namespaceSelector:
        matchLabels:
          tollgate.dev/allow-opt-out: "true"
`

// TestOptOutRestrictedByNamespaceLabel: the Pod's author sets the opt-out
// annotation; only a namespace label (which they cannot set) makes it count.
// The second tollgate reads namespace labels from the apiserver, so a label
// added later takes effect without a restart.
func TestOptOutRestrictedByNamespaceLabel(t *testing.T) {
	allowing := namespace(t, "e2e-optout-allowed", map[string]string{"e2e-optout": "enabled", "tollgate.dev/allow-opt-out": "true"})
	strict := namespace(t, "e2e-optout-strict", map[string]string{"e2e-optout": "enabled"})
	startTollgateWith(t, "tollgate-optout", nil, []byte(optOutPolicy))

	w := &warnings{}
	cfg := rest.CopyConfig(cluster.restConfig)
	cfg.WarningHandler = w
	client := kubernetes.NewForConfigOrDie(cfg)
	optingOut := map[string]string{"tollgate.dev/inject": "false"}
	create := func(t *testing.T, ns, name string, annotations map[string]string) (*corev1.Pod, []string) {
		t.Helper()
		w.Take()
		p, err := client.CoreV1().Pods(ns).Create(ctx(t), pod(name, env("dev"), annotations), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("create %s/%s: %v", ns, name, err)
		}
		return p, w.Take()
	}
	hasProxy := func(p *corev1.Pod) bool {
		return count(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == "proxy" }) == 1
	}

	// The registration reaches the apiserver's webhook informer asynchronously.
	framework.WaitFor(t, 30*time.Second, "injection in effect", func() bool {
		p, _ := create(t, strict, "probe", nil)
		return hasProxy(p)
	})

	p, warned := create(t, allowing, "opted-out", optingOut)
	if hasProxy(p) {
		t.Errorf("%s: the opt-out was not honoured in a namespace that allows it", allowing)
	}
	if len(warned) != 0 {
		t.Errorf("%s: warnings %q, want none", allowing, warned)
	}

	p, warned = create(t, strict, "opted-out", optingOut)
	if !hasProxy(p) {
		t.Errorf("%s: the opt-out was honoured in a namespace that does not allow it", strict)
	}
	want := "policy mandatory-proxy does not allow opting out with tollgate.dev/inject in namespace " + strict
	if len(warned) != 1 || !strings.Contains(warned[0], want) {
		t.Errorf("%s: warnings %q, want one saying %q", strict, warned, want)
	}

	// The namespace's administrator allows it: the next Pod's opt-out counts.
	patch := []byte(`{"metadata":{"labels":{"tollgate.dev/allow-opt-out":"true"}}}`)
	if _, err := cluster.client.CoreV1().Namespaces().Patch(ctx(t), strict, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		undo := []byte(`{"metadata":{"labels":{"tollgate.dev/allow-opt-out":null}}}`)
		_, _ = cluster.client.CoreV1().Namespaces().Patch(context.Background(), strict, types.MergePatchType, undo, metav1.PatchOptions{})
	})
	start := time.Now()
	framework.WaitFor(t, 10*time.Second, "the new namespace label honoured", func() bool {
		p, _ := create(t, strict, "opted-out-later", optingOut)
		return !hasProxy(p)
	})
	t.Logf("namespace label honoured %v after the patch", time.Since(start).Round(time.Millisecond))
}
