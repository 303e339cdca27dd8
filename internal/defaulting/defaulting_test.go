package defaulting

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// TestObject: each testdata manifest, defaulted, holds the values the
// apiserver gives it (want: path = JSON value, keys sorted; a missing path is
// "absent").
func TestObject(t *testing.T) {
	tests := []struct {
		file     string
		want     map[string]string
		warnings []string
	}{
		{"pod-volume-without-source.yaml", map[string]string{
			"spec.volumes.0.emptyDir":  `{}`,
			"spec.volumes.1.configMap": `{"defaultMode":420,"name":"settings"}`,
		}, nil},
		{"pod-containers.yaml", map[string]string{
			"spec.containers.0.imagePullPolicy":          `"Always"`,
			"spec.containers.1.imagePullPolicy":          `"IfNotPresent"`,
			"spec.containers.0.terminationMessagePath":   `"/dev/termination-log"`,
			"spec.containers.0.terminationMessagePolicy": `"File"`,
			"spec.containers.0.ports.0.protocol":         `"TCP"`,
			"spec.containers.1.resources.requests":       `{"cpu":"500m"}`,
			"spec.restartPolicy":                         `"Always"`,
			"spec.dnsPolicy":                             `"ClusterFirst"`,
			"spec.schedulerName":                         `"default-scheduler"`,
			"spec.securityContext":                       `{}`,
			"spec.terminationGracePeriodSeconds":         `30`,
			"spec.enableServiceLinks":                    `true`,
			"spec.serviceAccountName":                    `"runner"`,
			"spec.serviceAccount":                        `"runner"`,
		}, nil},
		{"deployment.yaml", map[string]string{
			"spec.replicas":                                   `1`,
			"spec.revisionHistoryLimit":                       `10`,
			"spec.progressDeadlineSeconds":                    `600`,
			"spec.strategy":                                   `{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"}`,
			"spec.template.spec.restartPolicy":                `"Always"`,
			"spec.template.spec.containers.0.imagePullPolicy": `"IfNotPresent"`,
			"status": `{}`,
		}, nil},
		{"job.yaml", map[string]string{
			"spec.backoffLimit":   `6`,
			"spec.completions":    `1`,
			"spec.parallelism":    `1`,
			"spec.completionMode": `"NonIndexed"`,
			"spec.suspend":        `false`,
			"spec.template.spec.containers.0.terminationMessagePath": `"/dev/termination-log"`,
		}, nil},
		{"service.yaml", map[string]string{
			"spec.type":                  `"ClusterIP"`,
			"spec.sessionAffinity":       `"None"`,
			"spec.ports.0.protocol":      `"TCP"`,
			"spec.ports.0.targetPort":    `8080`,
			"spec.internalTrafficPolicy": `"Cluster"`,
		}, nil},
		{"networkpolicy.yaml", map[string]string{
			"spec.policyTypes":                `["Ingress"]`,
			"spec.ingress.0.ports.0.protocol": `"TCP"`,
		}, nil},
		{"rolebinding.yaml", map[string]string{
			"subjects.0.apiGroup": `"rbac.authorization.k8s.io"`,
			"subjects.1.apiGroup": `absent`,
		}, nil},
		{"unknown-field.yaml", map[string]string{
			"spec.containers.0.imagePullPolicy": `"Always"`,
			"spec.containrs":                    `absent`,
		}, []string{`unknown field "spec.containrs"`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			gvk, in := read(t, tt.file)
			out, warnings, err := Object(gvk, in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(warnings, tt.warnings) {
				t.Errorf("warnings = %q, want %q", warnings, tt.warnings)
			}
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			for path, want := range tt.want {
				if v := at(got, path); v != want {
					t.Errorf("%s = %s, want %s", path, v, want)
				}
			}
			again, _, err := Object(gvk, out)
			if err != nil || !bytes.Equal(again, out) {
				t.Errorf("defaulting twice changes the object (%v):\n%s\n%s", err, out, again)
			}
		})
	}
}

// TestObjectUnchanged: what is not a built-in kind comes back byte for byte.
func TestObjectUnchanged(t *testing.T) {
	for _, tt := range []struct {
		name string
		gvk  schema.GroupVersionKind
	}{
		{"custom resource", schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}},
		{"custom resource named like a built-in kind", schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Pod"}},
		{"unknown version of a built-in group", schema.GroupVersionKind{Group: "apps", Version: "v9", Kind: "Deployment"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(`{"apiVersion":"` + tt.gvk.GroupVersion().String() + `","kind":"` + tt.gvk.Kind +
				`","metadata":{"name":"w"},"spec":{"volumes":[{"name":"x"}],"anything":1}}`)
			out, warnings, err := Object(tt.gvk, in)
			if err != nil || warnings != nil || !bytes.Equal(out, in) {
				t.Errorf("Object = %s, %q, %v; want the input unchanged", out, warnings, err)
			}
		})
	}
}

// TestObjectErrors: a value of the wrong type is refused as the apiserver
// refuses it, naming the field.
func TestObjectErrors(t *testing.T) {
	pod := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	for _, tt := range []struct {
		name, json string
		want       []string
	}{
		{"string for a list", `{"apiVersion":"v1","kind":"Pod","spec":{"containers":"web"}}`,
			[]string{`Pod in version "v1" cannot be handled as a Pod`, "spec.containers"}},
		{"string for a port", `{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"a","ports":[{"containerPort":"80"}]}]}}`,
			[]string{"spec.containers.ports.containerPort", "int32"}},
		{"not JSON", `{"apiVersion":"v1","kind":"Pod",`, []string{`Pod in version "v1" cannot be handled as a Pod`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Object(pod, []byte(tt.json))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func read(t *testing.T, file string) (schema.GroupVersionKind, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	var tm struct{ APIVersion, Kind string }
	if err := json.Unmarshal(js, &tm); err != nil {
		t.Fatal(err)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		t.Fatal(err)
	}
	return gv.WithKind(tm.Kind), js
}

// at is the JSON of the value at a dotted path (list items by index), or
// "absent".
func at(v any, path string) string {
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				return "absent"
			}
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(x) {
				return "absent"
			}
			v = x[i]
		default:
			return "absent"
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
