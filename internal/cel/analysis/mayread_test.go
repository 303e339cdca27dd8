package analysis

import "testing"

func TestMayRead(t *testing.T) {
	managed := []string{"metadata", "managedFields"}
	applied := []string{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}
	for _, tc := range []struct {
		expression    string
		managed, last bool
	}{
		{"object.spec.containers.all(c, c.image.contains(':'))", false, false},
		{"has(object.metadata.labels) && object.metadata.labels['team'] != ''", false, false},
		{"object.metadata.annotations['owner'] == 'a'", false, false},
		{"object.metadata.?annotations[?'owner'].orValue('') == 'a'", false, false},
		{"'owner' in object.metadata.annotations", false, false},
		{"has(object.metadata.annotations) && has(object.metadata.name)", false, false},
		{"request.operation == 'CREATE' && request.namespace != ''", false, false},
		{"oldObject == null || oldObject.spec == object.spec", false, false},
		// Reads.
		{"object.metadata.managedFields.size() < 10", true, false},
		{"has(object.metadata.managedFields)", true, false},
		{"object.metadata.managedFields != null", true, false},
		{"'managedFields' in object.metadata", true, false},
		{"object.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] == ''", false, true},
		{"'kubectl.kubernetes.io/last-applied-configuration' in object.metadata.annotations", false, true},
		{"object.metadata.annotations.size() <= 3", false, true},
		{"object.metadata.annotations.all(k, k.startsWith('x'))", false, true},
		{"object.metadata.annotations[variables.key] == ''", false, true},
		{"object.metadata.exists(k, k == 'x')", true, true},
		{"string(object).size() < 100", true, true},
		{"request.object.metadata.managedFields.size() > 0", true, false},
		{"oldObject.metadata == object.metadata", true, true},
		{"this does not parse (", true, true},
	} {
		if got := MayRead(managed, tc.expression); got != tc.managed {
			t.Errorf("MayRead(managedFields, %q) = %v, want %v", tc.expression, got, tc.managed)
		}
		if got := MayRead(applied, tc.expression); got != tc.last {
			t.Errorf("MayRead(last-applied, %q) = %v, want %v", tc.expression, got, tc.last)
		}
	}
	if MayRead(managed) || MayRead(managed, "", "true") {
		t.Error("no expressions read nothing")
	}
}
