package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckDeepObjects: check decides a custom resource nested deeper
// than fastjson reads (300 levels) as the apiserver's validator does, as
// it decides a shallow one, with and without the fast path; up to the
// apiserver's own limit (10,000 levels), past which reading the manifest
// refuses it, as the apiserver refuses such an object.
func TestCheckDeepObjects(t *testing.T) {
	dir := t.TempDir()
	// small-widgets, as a ValidatingAdmissionPolicy and as a tollgate
	// policy (CEL programs reading the objects' JSON).
	vap, err := os.ReadFile(filepath.Join("testdata", "kinds", "custom-policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policies := filepath.Join(dir, "policies.yaml")
	if err := os.WriteFile(policies, append(vap, `---
apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: small-widgets-cel}
spec:
  match:
    resources: [widgets.example.com]
  validate:
    expressions:
    - expression: "object.spec.size <= 2 && has(object.spec.deep.a)"
      messageExpression: "'widget ' + request.namespace + '/' + object.metadata.name + ' is too big: ' + string(object.spec.size)"
`...), 0o644); err != nil {
		t.Fatal(err)
	}
	crd := filepath.Join(dir, "crd.yaml")
	if err := os.WriteFile(crd, []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, listKind: WidgetList}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		levels, size int
		code         int
		out          []string
	}{
		{3, 3, 1, []string{"widget default/gear is too big: 3", "0 pass, 2 fail"}},
		{3, 1, 0, []string{"2 pass, 0 fail"}},
		{301, 3, 1, []string{"widget default/gear is too big: 3", "0 pass, 2 fail"}},
		{301, 1, 0, []string{"2 pass, 0 fail"}},
		{10000, 3, 1, []string{"widget default/gear is too big: 3", "0 pass, 2 fail"}},
		{10001, 1, 2, []string{"exceeded max depth of 10000"}},
	} {
		n := tt.levels - 2 // the object and spec
		widget := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"gear"},"spec":{"size":%d,"deep":%s1%s}}`,
			tt.size, strings.Repeat(`{"a":`, n), strings.Repeat(`}`, n))
		f := filepath.Join(dir, fmt.Sprintf("widget-%d-%d.json", tt.levels, tt.size))
		if err := os.WriteFile(f, []byte(widget), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, fast := range []string{"true", "false"} {
			code, out, errs := run("check", "-c", policies, "-f", f, "--crd", crd, "--cel-fast-path="+fast)
			if code != tt.code || !containsAll(out+errs, tt.out) {
				t.Errorf("%d levels, size %d, fast path %s: exit %d, want %d and %q\nstdout:\n%s\nstderr:\n%s", tt.levels, tt.size, fast, code, tt.code, tt.out, out, errs)
			}
		}
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
