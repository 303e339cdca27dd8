package cli

import (
	"testing"
)

// TestReferences runs check, review and test on a policy that reads other
// objects (policies/references/unique-ingress-host.yaml), with the
// referenced objects from the manifests and from --references.
func TestReferences(t *testing.T) {
	const (
		lib    = "../../policies/references/unique-ingress-host.yaml"
		data   = "testdata/references/"
		review = data + "review-shop.json"
	)
	for _, tt := range []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"two manifests claim a host: both refused", []string{"check", "-c", lib, "-f", data + "shop.yaml", "-f", data + "copy.yaml"}, 1,
			[]string{"ingress host shop.example.com is already claimed by ingress edge/storefront-copy", "is already claimed by ingress shop/storefront"}},
		{"one manifest alone: admitted, not compared with itself", []string{"check", "-c", lib, "-f", data + "shop.yaml"}, 0, []string{"pass"}},
		{"a host claimed in --references", []string{"check", "-c", lib, "-f", data + "shop.yaml", "--references", data + "copy.yaml"}, 1,
			[]string{"already claimed by ingress edge/storefront-copy"}},
		{"a host no one else claims", []string{"check", "-c", lib, "-f", data + "docs.yaml", "--references", data}, 0, []string{"pass"}},
		{"review without --references: an error naming the kind, failurePolicy Fail", []string{"review", "-c", lib, "-f", review}, 1,
			[]string{"Ingress (networking.k8s.io/v1)", "--references"}},
		{"review with --references", []string{"review", "-c", lib, "-f", review, "--references", data + "copy.yaml"}, 1,
			[]string{"already claimed by ingress edge/storefront-copy"}},
		{"review with --references of its own stored copy", []string{"review", "-c", lib, "-f", review, "--references", data + "shop.yaml"}, 0,
			[]string{`"allowed":true`}},
		{"an index not declared: a load error naming it", []string{"check", "-c", data + "undeclared-index.yaml", "-f", data + "shop.yaml"}, 2,
			[]string{`references.ingresses has no index "hosts" (declared: [host])`}},
		{"a reference not declared: a load error naming it", []string{"check", "-c", data + "undeclared-reference.yaml", "-f", data + "shop.yaml"}, 2,
			[]string{"references.budgets is not declared in spec.references (declared: [pdbs])"}},
		{"the library's suite", []string{"test", "../../policies/tests"}, 0, []string{"references.tollgate-test.yaml: unique-ingress-host edge/storefront-copy: fail", "references.tollgate-test.yaml: hpa-target-exists shop/rollout-hpa: skip", "0 failed"}},
	} {
		t.Run(tt.name, func(t *testing.T) { runWant(t, tt.code, tt.contains, tt.args...) })
	}
}
