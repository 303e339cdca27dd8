package cel_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/cel"
)

// TestMessagesAsReference: the rules of testdata/messages.yaml, whose
// errors print a value's Go type, fail with the apiserver's validator's
// message (EvaluateTracked, on the decoded objects), which holds the
// apiserver's type names (want), both when Evaluate reads the objects
// from their JSON and with TrackedOnly: no type of tollgate's own.
func TestMessagesAsReference(t *testing.T) {
	data, err := os.ReadFile("testdata/messages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Rule string `json:"rule"`
		Bad  string `json:"bad"`
		Want string `json:"want"`
	}
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	obj := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"shop"},"spec":{"m":{"a":1},"l":[1,2],"e":{},"el":[]}}`)
	in := func() *cel.Input {
		o, err := cel.RuntimeObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		oo, _ := cel.RuntimeObject(obj)
		return &cel.Input{Object: o, OldObject: oo, ObjectJSON: obj, OldObjectJSON: obj, Name: "cm", Namespace: "shop", Operation: "UPDATE",
			Kind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			User: &user.DefaultInfo{Name: "alice", Groups: []string{"dev"}, Extra: map[string][]string{"k": {"v"}}}}
	}
	for _, c := range cases {
		vars := []cel.NamedExpression{{Name: "s", Expression: "object.spec"}, {Name: "m", Expression: "object.spec.m"}}
		if c.Bad != "" {
			vars = append(vars, cel.NamedExpression{Name: "bad", Expression: c.Bad})
		}
		p, errs := cel.Compile(cel.Spec{Name: "messages", Variables: vars, Validations: []cel.Validation{{Expression: c.Rule}}}, field.NewPath("spec"))
		if len(errs) > 0 {
			t.Fatalf("%s: %v", c.Rule, errs)
		}
		want := p.EvaluateTracked(context.Background(), trackedInput(in()))
		if want.Err == nil || !strings.Contains(want.Err.Error(), c.Want) {
			t.Errorf("%s: the apiserver's validator says %v, want %q in it", c.Rule, want.Err, c.Want)
		}
		only := fastInput(in())
		only.TrackedOnly = true
		for way, in := range map[string]*cel.Input{"from JSON": fastInput(in()), "TrackedOnly": only} {
			if got := p.Evaluate(context.Background(), in); !sameVerdict(got, want) {
				t.Errorf("%s, %s:\n got  %v\n want %v", c.Rule, way, got.Err, want.Err)
			}
		}
	}
}
