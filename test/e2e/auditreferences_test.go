//go:build e2e

package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/report"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestAuditReferences stores two Ingresses of one host (as a race past
// admission would leave them) and one of its own host, then audits them
// with the library's unique-ingress-host, the referenced Ingresses listed
// from the cluster: both duplicates fail, naming each other; the other
// passes.
func TestAuditReferences(t *testing.T) {
	policy := filepath.Join(framework.RepoRoot(), "policies", "references", "unique-ingress-host.yaml")
	auditIngressHosts(t, "audit-refs", policy, func(a, b string) map[string]hostWant {
		return map[string]hostWant{
			a + "/shop":      {"fail", "already claimed by ingress " + b + "/shop-copy"},
			b + "/shop-copy": {"fail", "already claimed by ingress " + a + "/shop"},
			a + "/docs":      {"pass", ""},
		}
	})
}

// TestAuditKyvernoReferences is TestAuditReferences with the rule as a
// Kyverno ValidatingPolicy writes it, resource.List of every Ingress: each
// stored Ingress is audited as its CREATE, so it is not among what it
// lists, and only the duplicates fail.
func TestAuditKyvernoReferences(t *testing.T) {
	policy := filepath.Join(framework.RepoRoot(), "internal", "references", "testdata", "kyverno-unique-ingress-host.yaml")
	auditIngressHosts(t, "audit-krefs", policy, func(a, b string) map[string]hostWant {
		return map[string]hostWant{
			a + "/shop":      {"fail", "Policy unique-ingress-host failed: ingress host shop.audit-krefs.example is already claimed"},
			b + "/shop-copy": {"fail", "Policy unique-ingress-host failed: ingress host shop.audit-krefs.example is already claimed"},
			a + "/docs":      {"pass", ""},
		}
	})
}

// hostWant is one audited object's expected result and message.
type hostWant struct{ result, message string }

// auditIngressHosts stores, in two namespaces named after prefix, two
// Ingresses of one host and one of its own (hosts named after prefix too:
// the audit reads every Ingress of the cluster), audits them with the policy
// file as a user allowed to list Namespaces and Ingresses only, and wants
// what want gives for each (by the two namespaces).
func auditIngressHosts(t *testing.T, prefix, policy string, want func(a, b string) map[string]hostWant) {
	c := ctx(t)
	a := namespace(t, prefix+"-a", nil)
	b := namespace(t, prefix+"-b", nil)
	for _, in := range []struct{ ns, name, host string }{{a, "shop", "shop." + prefix + ".example"}, {b, "shop-copy", "shop." + prefix + ".example"}, {a, "docs", "docs." + prefix + ".example"}} {
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: in.name, Namespace: in.ns},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: in.host}}}}
		if _, err := cluster.client.NetworkingV1().Ingresses(in.ns).Create(c, ing, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := userWith(t, prefix+"-reader", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list"}},
	})
	out, stderr, code := runTollgate(t, "audit", "--kubeconfig", kubeconfig, "-c", policy, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the duplicates fail): %s", code, stderr)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]report.Result{}
	for _, res := range r.Results {
		ref := res.Resources[0]
		if strings.HasPrefix(ref.Namespace, prefix+"-") {
			got[ref.Namespace+"/"+ref.Name] = res
		}
	}
	for key, w := range want(a, b) {
		res, ok := got[key]
		if !ok {
			t.Errorf("%s: no result", key)
			continue
		}
		if string(res.Result) != w.result || !strings.Contains(res.Message, w.message) {
			t.Errorf("%s: %s %q, want %s containing %q", key, res.Result, res.Message, w.result, w.message)
		}
	}
}
