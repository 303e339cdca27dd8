package cel_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tollgate-dev/tollgate/internal/cel"
)

// deepObject is a custom resource whose spec nests objects named "a"
// until there are levels objects in all, the object itself counted (as
// encoding/json's and the apiserver's decoders count their limit); the
// innermost holds {"a": 1}, one level more as fastjson counts depth.
func deepObject(levels int) []byte {
	n := levels - 1 // the object, then spec's
	return []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"shop"},"spec":` +
		strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n) + `}`)
}

// deepSpec are rules reading the top of a deep object, its depths (a
// comprehension over the whole of it; equality, which walks it) and one
// failing on a deep value (the message names its Go type).
var deepSpec = cel.Spec{Name: "deep",
	Variables: []cel.NamedExpression{{Name: "inner", Expression: "object.spec.a.a.a"}},
	Validations: []cel.Validation{
		{Expression: "object.metadata.name == 'w'"},
		{Expression: "has(object.spec.a.a) && size(variables.inner) == 1"},
		{Expression: "object.spec == oldObject.spec"},
		{Expression: "object.spec.a.a.a.a == object.spec.a.a.a", MessageExpression: "'deep ' + string(size(object.spec.a))"},
		{Expression: "object.spec.all(k, k == 'a' && object.spec[k].exists(x, x == 'b'))", Message: "no b"},
		{Expression: "[1][variables.inner] == 1"},
	}}

// TestDeepObjects: objects nested deeper than fastjson reads (300 levels
// as it counts them) are decided as the apiserver's validator decides
// them on the object as the apiserver decodes it (util/json, up to
// 10,000 levels), from the review's JSON and TrackedOnly; an object
// past the apiserver's own limit, which it refuses before any policy
// sees it, fails to evaluate. Just under and over fastjson's depth, and
// at and past the apiserver's.
func TestDeepObjects(t *testing.T) {
	p, errs := cel.Compile(deepSpec, field.NewPath("spec"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	gvk, gvr := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	for _, levels := range []int{298, 299, 300, 301, 5000, 10000, 10001} {
		obj := deepObject(levels)
		in := func() *cel.Input {
			return &cel.Input{ObjectJSON: obj, OldObjectJSON: obj, Kind: gvk, Resource: gvr, Name: "w", Namespace: "shop", Operation: "UPDATE",
				User: &user.DefaultInfo{Name: "alice"}}
		}
		fromJSON, only := fastInput(in()), fastInput(in())
		only.TrackedOnly = true
		var m map[string]any
		if err := utiljson.Unmarshal(obj, &m); err != nil {
			if levels <= 10000 {
				t.Fatalf("%d levels: the apiserver's decoder refuses: %v", levels, err)
			}
			// The apiserver refuses the object: no policy decides it.
			for way, in := range map[string]*cel.Input{"from JSON": fromJSON, "TrackedOnly": only} {
				if got := p.Evaluate(context.Background(), in); got.Err == nil || !strings.Contains(got.Err.Error(), "exceeded max depth") {
					t.Errorf("%d levels, %s: got %+v, want the decoder's error", levels, way, got)
				}
			}
			continue
		}
		if levels > 10000 {
			t.Fatalf("%d levels: the apiserver's decoder accepts", levels)
		}
		ref := in()
		ref.ObjectJSON, ref.OldObjectJSON = nil, nil
		ref.Object, ref.OldObject = &unstructured.Unstructured{Object: m}, &unstructured.Unstructured{Object: m}
		want := p.EvaluateTracked(context.Background(), ref)
		if want.Err == nil || len(want.RuleErrors) != 1 || len(want.Violations) != 2 {
			t.Errorf("%d levels: the validator says %+v, want two denials and one error", levels, want)
		}
		for way, in := range map[string]*cel.Input{"from JSON": fromJSON, "TrackedOnly": only} {
			if got := p.Evaluate(context.Background(), in); !sameVerdict(got, want) {
				t.Errorf("%d levels, %s:\n got  %+v\n want %+v", levels, way, got, want)
			}
		}
	}
}
