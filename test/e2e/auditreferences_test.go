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
	c := ctx(t)
	a := namespace(t, "audit-refs-a", nil)
	b := namespace(t, "audit-refs-b", nil)
	for _, in := range []struct{ ns, name, host string }{{a, "shop", "shop.refs.example"}, {b, "shop-copy", "shop.refs.example"}, {a, "docs", "docs.refs.example"}} {
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: in.name, Namespace: in.ns},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: in.host}}}}
		if _, err := cluster.client.NetworkingV1().Ingresses(in.ns).Create(c, ing, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := userWith(t, "audit-refs-reader", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list"}},
	})
	policy := filepath.Join(framework.RepoRoot(), "policies", "references", "unique-ingress-host.yaml")
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
		if strings.HasPrefix(ref.Namespace, "audit-refs-") {
			got[ref.Namespace+"/"+ref.Name] = res
		}
	}
	for key, want := range map[string]struct{ result, message string }{
		a + "/shop":      {"fail", "already claimed by ingress " + b + "/shop-copy"},
		b + "/shop-copy": {"fail", "already claimed by ingress " + a + "/shop"},
		a + "/docs":      {"pass", ""},
	} {
		res, ok := got[key]
		if !ok {
			t.Errorf("%s: no result", key)
			continue
		}
		if string(res.Result) != want.result || !strings.Contains(res.Message, want.message) {
			t.Errorf("%s: %s %q, want %s containing %q", key, res.Result, res.Message, want.result, want.message)
		}
	}
}
