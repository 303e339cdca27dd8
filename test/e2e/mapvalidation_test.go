//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TestMAPValidationDifferential: every MutatingAdmissionPolicy or binding
// tollgate refuses at load (testdata/map-invalid.yaml) is refused by the
// apiserver too.
func TestMAPValidationDifferential(t *testing.T) {
	requireMAPServed(t)
	data, err := os.ReadFile("testdata/map-invalid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufioReader(data))
	n := 0
	for {
		doc, err := reader.Read()
		if err != nil {
			break
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		n++
		name := fmt.Sprintf("document %d", n)
		if _, err := policy.Parse("map-invalid.yaml", doc); err == nil {
			t.Errorf("%s: tollgate loads it", name)
		} else {
			name = strings.SplitN(err.Error(), "\n", 2)[0]
		}
		resource := "mutatingadmissionpolicies"
		if strings.Contains(string(js), `"kind":"MutatingAdmissionPolicyBinding"`) {
			resource = "mutatingadmissionpolicybindings"
		}
		err = cluster.client.AdmissionregistrationV1().RESTClient().Post().Resource(resource).
			Param("dryRun", "All").Param("fieldValidation", "Strict").Body(js).Do(context.Background()).Error()
		if err == nil {
			t.Errorf("the apiserver accepts what tollgate refuses: %s", name)
			continue
		}
		t.Logf("refused by both: %s\n  apiserver: %v", name, err)
	}
	t.Logf("MAP validation differential: %d documents", n)
	if n < 19 {
		t.Errorf("only %d documents read", n)
	}
}
