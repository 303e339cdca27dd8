package exception

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func kyvernoDoc(t *testing.T, version, spec string) []byte {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte("apiVersion: policies.kyverno.io/" + version + "\nkind: PolicyException\nmetadata: {name: e, namespace: shop}\nspec:\n" + spec))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestDecodeKyverno: Kyverno's PolicyException read as its CRD and
// PolicyExceptionSpec.Validate read it; every problem with its path.
func TestDecodeKyverno(t *testing.T) {
	const ref = "  policyRefs: [{name: p, kind: ValidatingPolicy}]\n"
	for _, tc := range []struct {
		name, version, spec string
		want                string // "" for no error
		whole               bool
		report              string
	}{
		{"whole", "v1", ref, "", true, "skip"},
		{"values", "v1beta1", ref + "  allowedValues: [a]\n  reportResult: pass\n", "", false, "pass"},
		{"images", "v1alpha1", ref + "  images: [nginx]\n  expiresAt: '2030-01-01T00:00:00Z'\n  properties: {reason: legacy}\n", "", false, "skip"},
		{"unknown field", "v1", ref + "  exceptions: []\n", `unknown field "spec.exceptions"`, false, ""},
		{"no refs", "v1", "  images: [a]\n", "spec.policyRefs: Invalid value: null: must specify at least one policy ref", false, ""},
		{"ref without name", "v1", "  policyRefs: [{kind: ValidatingPolicy}]\n", "spec.policyRefs[0].name: Invalid value: \"\": must specify policy name", false, ""},
		{"condition without expression", "v1", ref + "  matchConditions: [{name: a}]\n", "spec.matchConditions[0].expression: Required value", false, ""},
		{"report", "v1", ref + "  reportResult: warn\n", `spec.reportResult: Unsupported value: "warn"`, false, ""},
		{"mode", "v1", ref + "  evaluationMode: JSON\n", `spec.evaluationMode: Unsupported value: "JSON"`, false, ""},
		{"version", "v2", ref, `apiVersion: Unsupported value: "policies.kyverno.io/v2"`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := kyvernoDoc(t, tc.version, tc.spec)
			if !IsKyverno(js) || Is(js) {
				t.Fatal("not told apart from tollgate's PolicyException")
			}
			e, errs := DecodeKyverno(js)
			if tc.want != "" {
				if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want) {
					t.Errorf("errors %v, want %q", errs, tc.want)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			k := e.Kyverno
			if k.Whole() != tc.whole || k.ReportResult != tc.report || k.Key(e.Name()) != "shop/e" ||
				!k.Names("ValidatingPolicy", "p") || k.Names("NamespacedValidatingPolicy", "p") {
				t.Errorf("read %+v", k)
			}
		})
	}
}
