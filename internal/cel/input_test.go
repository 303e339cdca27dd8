package cel

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestInputReadsJSON: an input with its objects as JSON only is evaluated
// without decoding them, on the values the JSON holds; a program with
// match conditions (the apiserver's matcher) decodes them, once.
func TestInputReadsJSON(t *testing.T) {
	pod := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"i:1"},{"name":"b","image":"i:2"}]}}`)
	old := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"v":"1"}},"spec":{"containers":[]}}`)
	compile := func(spec Spec) *Program {
		p, errs := Compile(spec, field.NewPath("spec"))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		return p
	}
	plain := compile(Spec{Name: "plain", Validations: []Validation{
		{Expression: "object.spec.containers.all(c, c.image.startsWith('i:'))"},
		{Expression: "size(object.spec.containers) == 3", MessageExpression: "'has ' + string(size(object.spec.containers))"},
		{Expression: "oldObject.metadata.labels.v == '2'", MessageExpression: "'old v ' + oldObject.metadata.labels.v"},
	}})
	conditional := compile(Spec{Name: "conditional", Conditions: []NamedExpression{{Name: "named", Expression: "object.metadata.name == 'p'"}},
		Validations: []Validation{{Expression: "true"}}})
	in := &Input{ObjectJSON: pod, OldObjectJSON: old, Operation: "UPDATE", Name: "p", Namespace: "ns"}
	out := plain.Evaluate(context.Background(), in)
	want := []Violation{{Message: "has 2", Reason: "Invalid", Rule: 1}, {Message: "old v 1", Reason: "Invalid", Rule: 2}}
	if out.Err != nil || !reflect.DeepEqual(out.Violations, want) {
		t.Fatalf("got %+v, want violations %+v", out, want)
	}
	if in.decoded {
		t.Fatal("the objects were decoded for a program without match conditions")
	}
	if out := conditional.Evaluate(context.Background(), in); out.Skipped || out.Err != nil {
		t.Fatalf("conditional: %+v", out)
	}
	obj, oldObj, err := in.Objects()
	if err != nil || obj == nil || oldObj == nil || in.obj != obj || in.Object != nil {
		t.Fatalf("the match conditions did not decode the objects (or set the fields): %v %v %v", obj, oldObj, err)
	}
	conditional.Evaluate(context.Background(), in)
	if again, _, _ := in.Objects(); again != obj {
		t.Error("the objects were decoded again")
	}
}
