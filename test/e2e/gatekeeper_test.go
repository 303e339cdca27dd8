//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestGatekeeper serves Gatekeeper's ConstraintTemplates and Constraints
// as they are: gatekeeper-library's allowedrepos with its sample
// Constraint (moved to the test's namespace), and a template of the
// policy package's tests with a deny Constraint selecting namespaces by
// label (read from the cluster) and a warn Constraint selecting them by
// name with a wildcard, and a Config that exempts one namespace from the
// webhook. Through a real kube-apiserver, each Pod gets Gatekeeper's
// words: denials as "[constraint] message", joined by newlines, warnings
// likewise; in the exempt namespace, nothing.
func TestGatekeeper(t *testing.T) {
	c := context.Background()
	for ns, labels := range map[string]map[string]string{"gk-shop": {"gk": "shop"}, "gk-other": nil, "gk-exempt": {"gk": "shop"}} {
		if err := framework.EnsureNamespace(c, cluster.client, ns, labels); err != nil {
			t.Fatal(err)
		}
	}
	repos, err := manifest.ReadFile("../corpus/gatekeeper-library/library/general/allowedrepos/template.yaml.gz")
	if err != nil {
		t.Fatal(err)
	}
	repoConstraint, err := manifest.ReadFile("../corpus/gatekeeper-library/library/general/allowedrepos/samples/repo-must-be-openpolicyagent/constraint.yaml.gz")
	if err != nil {
		t.Fatal(err)
	}
	labels, err := os.ReadFile("../../internal/policy/testdata/gatekeeper/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Join([][]byte{repos, bytes.Replace(repoConstraint, []byte(`"default"`), []byte(`"gk-shop"`), 1), labels, []byte(`
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: TestRequiredLabels
metadata: {name: owner}
spec:
  match:
    kinds: [{apiGroups: [""], kinds: [Pod]}]
    namespaceSelector: {matchLabels: {gk: shop}}
  parameters: {labels: [owner]}
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: TestRequiredLabels
metadata: {name: cost}
spec:
  enforcementAction: warn
  match:
    kinds: [{apiGroups: [""], kinds: [Pod]}]
    namespaces: ["gk-*"]
  parameters: {labels: [cost]}
---
apiVersion: config.gatekeeper.sh/v1alpha1
kind: Config
metadata: {name: config, namespace: gatekeeper-system}
spec:
  match:
  - processes: [webhook]
    excludedNamespaces: [gk-exempt]
`)}, []byte("\n---\n"))
	gone := func(ctx context.Context) error {
		_, err := cluster.client.CoreV1().Pods("gk-shop").Create(ctx, gkPod("gone", "nginx", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	startTollgateWith(t, "tollgate-gatekeeper", gone, docs)

	w := &warnings{}
	cfg := rest.CopyConfig(cluster.restConfig)
	cfg.WarningHandler = w
	client := kubernetes.NewForConfigOrDie(cfg)
	const prefix = `admission webhook "gatekeeper.validate.tollgate.dev" denied the request: `
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if a := createIn(c, t, client, w, "gk-shop", gkPod("probe", "nginx", nil)); strings.Contains(a.raw, prefix) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("tollgate's Gatekeeper webhook not in effect after 30s")
		}
	}
	both := map[string]string{"owner": "a", "cost": "b"}
	for _, tc := range []struct {
		name, ns, image string
		labels          map[string]string
		denial          string // without the apiserver's prefix; "" for allowed
		warnings        []string
	}{
		{"shop, nothing right", "gk-shop", "nginx", nil,
			// Gatekeeper sorts violations by the Constraint's kind, then name.
			"[repo-is-openpolicyagent] container <c> has an invalid image repo <nginx>, allowed repos are [\"openpolicyagent/\"]\n[owner] missing labels: {\"owner\"}",
			[]string{`[cost] missing labels: {"cost"}`}},
		{"shop, allowed repo", "gk-shop", "openpolicyagent/opa:0.9.2", nil, `[owner] missing labels: {"owner"}`, []string{`[cost] missing labels: {"cost"}`}},
		{"shop, everything right", "gk-shop", "openpolicyagent/opa:0.9.2", both, "", nil},
		{"other namespace: only the warning", "gk-other", "nginx", nil, "", []string{`[cost] missing labels: {"cost"}`}},
		{"other namespace, labelled", "gk-other", "nginx", both, "", nil},
		{"exempt by the Config: nothing said", "gk-exempt", "nginx", nil, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := createIn(c, t, client, w, tc.ns, gkPod("p", tc.image, tc.labels))
			// tollgate's codec drops control characters from messages,
			// the newline that joins Gatekeeper's lines included.
			tc.denial = strings.ReplaceAll(tc.denial, "\n", "")
			if a.allowed != (tc.denial == "") || a.message != tc.denial {
				t.Errorf("allowed %v, message %q\nwant %q", a.allowed, a.message, tc.denial)
			}
			if tc.denial != "" && (a.code != 403 || !strings.Contains(a.raw, prefix+tc.denial)) {
				t.Errorf("code %d, %q: want 403 and %q", a.code, a.raw, prefix+tc.denial)
			}
			if strings.Join(a.warnings, "|") != strings.Join(tc.warnings, "|") {
				t.Errorf("warnings %q, want %q", a.warnings, tc.warnings)
			}
		})
	}
}

// gkPod is a Pod with the given labels, and the environment the suite's
// shared tollgate requires.
func gkPod(name, image string, labels map[string]string) *corev1.Pod {
	l := map[string]string{"environment": "dev"}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
}

// TestGatekeeperReferential serves gatekeeper-library's uniqueingresshost
// (a referential template) with its sample Constraint and the library's
// Config that syncs Ingresses: tollgate syncs them from the cluster into
// Gatekeeper's data.inventory, so a second Ingress with a host already
// taken is denied in Gatekeeper's words, and one with its own host is not.
func TestGatekeeperReferential(t *testing.T) {
	c := context.Background()
	if err := framework.EnsureNamespace(c, cluster.client, "gk-ref", nil); err != nil {
		t.Fatal(err)
	}
	dir := "../corpus/gatekeeper-library/library/general/uniqueingresshost/"
	var docs [][]byte
	for _, f := range []string{"template.yaml.gz", "samples/unique-ingress-host/constraint.yaml.gz", "sync.yaml.gz"} {
		b, err := manifest.ReadFile(dir + f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	ingress := func(name, host string) *networkingv1.Ingress {
		prefix := networkingv1.PathTypePrefix
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}}
	}
	ingresses := cluster.client.NetworkingV1().Ingresses("gk-ref")
	if _, err := ingresses.Create(c, ingress("first", "shop.example.com"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := func(ctx context.Context) error {
		_, err := ingresses.Create(ctx, ingress("gone", "shop.example.com"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	startTollgateWith(t, "tollgate-gatekeeper-ref", gone, bytes.Join(docs, []byte("\n---\n")))

	const want = `admission webhook "gatekeeper.validate.tollgate.dev" denied the request: [unique-ingress-host] ingress host conflicts with an existing ingress <shop.example.com>`
	var last error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, last = ingresses.Create(c, ingress("second", "shop.example.com"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if last != nil && strings.Contains(last.Error(), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a second Ingress for shop.example.com: %v\nwant %q", last, want)
		}
	}
	if _, err := ingresses.Create(c, ingress("other", "other.example.com"), metav1.CreateOptions{}); err != nil {
		t.Errorf("an Ingress with a host of its own: %v, want it created", err)
	}
	// The inventory follows the cluster: once the first is deleted, its
	// host is free; the one created above is now in the inventory.
	if err := ingresses.Delete(c, "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, 30*time.Second, "shop.example.com free again, other.example.com taken", func() bool {
		_, free := ingresses.Create(c, ingress("second", "shop.example.com"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		_, taken := ingresses.Create(c, ingress("third", "other.example.com"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return free == nil && taken != nil && strings.Contains(taken.Error(), "<other.example.com>")
	})
}
