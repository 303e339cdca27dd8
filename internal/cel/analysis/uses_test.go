package analysis

import (
	"slices"
	"testing"
)

func TestUses(t *testing.T) {
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
		if got := Uses("namespaceObject", tc.expression); got != tc.want {
			t.Errorf("Uses(namespaceObject, %q) = %v, want %v", tc.expression, got, tc.want)
		}
	}
	if Uses("namespaceObject") || Uses("namespaceObject", "", "true") {
		t.Error("no expressions use nothing")
	}
}

// TestRenameIdent: only the top-level variable is renamed, not a field, a
// string or a longer name, wherever it stands (inside macros too), in
// expressions with text of several bytes per code point.
func TestRenameIdent(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"exceptions.allowedValues", "params.allowedValues"},
		{`"é" + object.x in exceptions.allowedValues && x.exceptions == "exceptions"`, `"é" + object.x in params.allowedValues && x.exceptions == "exceptions"`},
		{"object.spec.containers.all(c, c.image in exceptions.allowedImages || exceptions.allowedValues.size() > 0)",
			"object.spec.containers.all(c, c.image in params.allowedImages || params.allowedValues.size() > 0)"},
		{"myexceptions.a && exceptionsx.b", "myexceptions.a && exceptionsx.b"},
		{"exceptions.(", "exceptions.("}, // does not parse: left to the compiler
	} {
		if got := RenameIdent(tc.in, "exceptions", "params"); got != tc.want {
			t.Errorf("RenameIdent(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFields(t *testing.T) {
	got := Fields("exceptions.allowedValues.size() > 0 && x.exceptions.y && exceptions.other", "exceptions")
	if want := []string{"allowedValues", "other"}; !slices.Equal(got, want) {
		t.Errorf("Fields = %q, want %q", got, want)
	}
}

// TestSelected: the fields selected of a variable, and whether it is
// also used whole.
func TestSelected(t *testing.T) {
	for _, tc := range []struct {
		expression string
		fields     []string
		whole      bool
	}{
		{"request.namespace != 'default' && has(request.kind)", []string{"namespace", "kind"}, false},
		{"object.spec.containers.all(c, c.name != request.name)", []string{"name"}, false},
		{"request == null || request.operation == 'CREATE'", []string{"operation"}, true},
		{"[request].size() == 1", nil, true},
		{"object.request.kind == 'x'", nil, false},
		{"this does not parse (", nil, true},
	} {
		fields, whole := Selected("request", tc.expression)
		if !slices.Equal(fields, tc.fields) || whole != tc.whole {
			t.Errorf("Selected(request, %q) = %v, %v; want %v, %v", tc.expression, fields, whole, tc.fields, tc.whole)
		}
	}
}
