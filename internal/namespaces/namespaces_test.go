package namespaces

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNamespacesLookup(t *testing.T) {
	known := Func(func(name string) (*corev1.Namespace, bool) {
		if name == "team" {
			return Of(name, map[string]string{"env": "prod"}), true
		}
		return nil, false
	})
	tests := []struct {
		name       string
		namespaces Func
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

// TestNamesPart: what of a namespace selector is decided by the name alone.
func TestNamesPart(t *testing.T) {
	name := metav1.LabelSelectorRequirement{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{"a"}}
	team := metav1.LabelSelectorRequirement{Key: "team", Operator: metav1.LabelSelectorOpExists}
	tests := []struct {
		name       string
		in, want   *metav1.LabelSelector
		wantOthers bool
	}{
		{"none", nil, nil, false},
		{"names only", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{name}}, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{name}}, false},
		{"labels only", &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, &metav1.LabelSelector{}, true},
		{"both", &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a", corev1.LabelMetadataName: "b"}, MatchExpressions: []metav1.LabelSelectorRequirement{team, name}},
			&metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "b"}, MatchExpressions: []metav1.LabelSelectorRequirement{name}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, others := NamesPart(tt.in)
			if !reflect.DeepEqual(got, tt.want) || others != tt.wantOthers {
				t.Errorf("got %v %v, want %v %v", got, others, tt.want, tt.wantOthers)
			}
		})
	}
}
