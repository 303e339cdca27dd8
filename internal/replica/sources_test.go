package replica

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

const paramPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  validations: [{expression: "object.spec.replicas <= int(params.data.max)"}]
`

// Without cluster access, params are the objects found with the policies,
// read again on each reload.
func TestExternalWithoutCluster(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	e := &sources{ctx: ctx}
	deny := admissionregistrationv1.DenyAction
	ref := &admissionregistrationv1.ParamRef{Name: "limits", ParameterNotFoundAction: &deny}
	kind := &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	for _, max := range []string{"1", "2"} {
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits, namespace: a}\ndata: {max: \"" + max + "\"}\n"
		if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(paramPolicy+"---\n"+cm), 0o644); err != nil {
			t.Fatal(err)
		}
		set, err := policy.LoadPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		ext, err := e.follow(set)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ext.Params.Collect(kind, ref, "a")
		if err != nil || len(got) != 1 {
			t.Fatalf("params %v, %v", got, err)
		}
		if v := got[0].(interface{ UnstructuredContent() map[string]any }).UnstructuredContent()["data"].(map[string]any)["max"]; v != max {
			t.Errorf("max = %v, want %s", v, max)
		}
	}
}
