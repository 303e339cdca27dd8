package policy

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNamespacesLookup(t *testing.T) {
	known := Namespaces(func(name string) (*corev1.Namespace, bool) {
		if name == "team" {
			return NamespaceOf(name, map[string]string{"env": "prod"}), true
		}
		return nil, false
	})
	tests := []struct {
		name       string
		namespaces Namespaces
		ns         string
		want       map[string]string // nil: no namespace
	}{
		{"known", known, "team", map[string]string{"kubernetes.io/metadata.name": "team", "env": "prod"}},
		{"unknown has the name label", known, "other", map[string]string{"kubernetes.io/metadata.name": "other"}},
		{"cluster scope", known, "", nil},
		{"namespaces not known", nil, "team", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.namespaces.Lookup(tt.ns)
			if tt.want == nil {
				if got != nil {
					t.Fatalf("got %v, want none", got)
				}
				return
			}
			if got == nil || got.Name != tt.ns || !reflect.DeepEqual(got.Labels, tt.want) {
				t.Errorf("got %+v, want %s with labels %v", got, tt.ns, tt.want)
			}
		})
	}
}
