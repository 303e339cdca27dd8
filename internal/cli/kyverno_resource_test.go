package cli

import (
	"encoding/json"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/report"
)

// TestKyvernoResourceLibrary: Kyverno's resource.Get and resource.List read
// the objects given with --references (and the manifests under check) as
// Kyverno reads them from the apiserver: Get an object or null; List the
// objects of one namespace, or of all for "", as {apiVersion, kind: <Kind>List,
// items}, with a labels map selecting; a cluster-scoped resource listed in a
// namespace is the apiserver's NotFound; a NamespacedValidatingPolicy reads
// its own namespace; the object a CREATE makes is not stored yet, so it is
// not among what it lists, while an UPDATE's stored copy is. Each policy
// words what it read as its message.
func TestKyvernoResourceLibrary(t *testing.T) {
	const dir = "testdata/kyverno-resource/"
	create := map[string]string{
		"get-found":                 "Policy get-found failed: x",
		"get-missing":               "Policy get-missing failed: null",
		"get-cluster":               "Policy get-cluster failed: r1",
		"list-namespace":            "Policy list-namespace failed: cm1,cm2",
		"list-all":                  "Policy list-all failed: a/cm1,a/cm2,b/cm3,b/self-cm",
		"list-labels":               "Policy list-labels failed: a/cm1,b/cm3",
		"list-shape":                "Policy list-shape failed: v1 ConfigMapList 2",
		"list-cluster-in-namespace": `Policy list-cluster-in-namespace failed: failed to evaluate message expression: failed to list resource: the server could not find the requested resource`,
		"camel-case":                "Policy camel-case failed: cm3 2",
		"namespaced":                "Policy namespaced failed: cm1,cm2 null",
		"self-cm":                   "Policy self failed: cm3",
	}
	update := map[string]string{}
	for k, v := range create {
		update[k] = v
	}
	update["self-cm"] = "Policy self failed: cm3,self-cm"
	for _, tc := range []struct {
		name string
		args []string
		want map[string]string
	}{
		{"CREATE", nil, create},
		{"UPDATE", []string{"--operation", "UPDATE", "--old", dir + "resources.yaml"}, update},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"check", "-c", dir + "policies.yaml", "-f", dir + "resources.yaml", "--references", dir + "objects.yaml", "-o", "json"}, tc.args...)
			code, out, stderr := run(args...)
			if code != exitDenied {
				t.Fatalf("exit %d, want %d: %s", code, exitDenied, stderr)
			}
			var r report.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, res := range r.Results {
				if res.Result != "fail" {
					t.Errorf("%s: %s %q, want fail", res.Resources[0].Name, res.Result, res.Message)
				}
				got[res.Resources[0].Name] = res.Message
			}
			for name, w := range tc.want {
				if got[name] != w {
					t.Errorf("%s: %q, want %q", name, got[name], w)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("%d results, want %d: %v", len(got), len(tc.want), got)
			}
		})
	}
}
