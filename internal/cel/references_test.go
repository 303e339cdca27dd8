package cel

import "testing"

func TestReferences(t *testing.T) {
	for _, tc := range []struct {
		expression string
		want       bool
	}{
		{"namespaceObject.metadata.labels['tier'] == 'gold'", true},
		{"has(namespaceObject.metadata.labels)", true},
		{"object.spec.containers.all(c, c.name != namespaceObject.metadata.name)", true},
		{"namespaceObject == null", true},
		{"namespaceObject.?metadata.?labels.orValue({}).size() > 0", true},
		{"object.metadata.namespace == 'namespaceObject'", false},
		{"object.namespaceObject == 1", false},
		{"has(object.metadata.labels) && request.namespace != ''", false},
		{"object.spec.replicas <= 5", false},
		{"this does not parse (", true},
	} {
		if got := References("namespaceObject", tc.expression); got != tc.want {
			t.Errorf("References(namespaceObject, %q) = %v, want %v", tc.expression, got, tc.want)
		}
	}
	if References("namespaceObject") || References("namespaceObject", "", "true") {
		t.Error("no expressions refer to nothing")
	}
}
