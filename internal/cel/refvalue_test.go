package cel

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// workloads declares the Deployments a policy reads, by image.
func workloads(t *testing.T) *refs.Compiled {
	t.Helper()
	c, errs := refs.Compile(refs.Declaration{Name: "deployments", APIVersion: "apps/v1", Kind: "Deployment",
		Indexes: []refs.Index{{Name: "image", Key: "object.spec.template.spec.containers.map(c, c.image)"}}}, field.NewPath("spec", "references").Index(0))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return c
}

func TestReferenceLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"undeclared reference", Spec{Validations: []Validation{{Expression: "references.pods.objects().size() == 0"}}},
			"references.pods is not declared in spec.references (declared: [deployments])"},
		{"undeclared index", Spec{Validations: []Validation{{Expression: "references.deployments.byKey('images', 'a').size() == 0"}}},
			`references.deployments has no index "images" (declared: [image])`},
		{"index not a literal", Spec{Variables: []NamedExpression{{Name: "i", Expression: "'image'"}},
			Validations: []Validation{{Expression: "references.deployments.byKey(variables.i, 'a').size() == 0"}}},
			"the index must be a string literal"},
		{"references as a whole", Spec{Validations: []Validation{{Expression: "size(references) == 1"}}},
			"references is read only as references.<name>"},
		{"in a match condition", Spec{Conditions: []NamedExpression{{Name: "c", Expression: "references.deployments.objects().size() > 0"}},
			Validations: []Validation{{Expression: "true"}}},
			"match conditions cannot read references"},
		{"in a message expression", Spec{Validations: []Validation{{Expression: "true", MessageExpression: "references.deploy.objects()[0].metadata.name"}}},
			"spec.validate.expressions[0].messageExpression"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Name = "p"
			tc.spec.References = []*refs.Compiled{workloads(t)}
			_, errs := Compile(tc.spec, field.NewPath("spec", "validate"))
			if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want) {
				t.Errorf("errors %v, want %q", errs, tc.want)
			}
		})
	}
}

func TestReferenceLookups(t *testing.T) {
	c := workloads(t)
	spec := Spec{Name: "shared-image", References: []*refs.Compiled{c},
		Variables: []NamedExpression{{Name: "others", Expression: "references.deployments.byKey('image', object.spec.template.spec.containers[0].image)"}},
		Validations: []Validation{{Expression: "variables.others.size() == 0",
			MessageExpression: "'image shared with ' + variables.others.map(o, o.metadata.namespace + '/' + o.metadata.name).join(', ')"}}}
	p, errs := Compile(spec, field.NewPath("spec", "validate"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	store := refs.New()
	store.Register(c)
	for _, name := range []string{"web", "api"} {
		d := deployment("registry.example.com/app:1")
		d.SetName(name)
		store.Upsert(d)
	}
	other := deployment("registry.example.com/other:2")
	other.SetName("batch")
	other.SetNamespace("jobs")
	store.Upsert(other)
	for _, tc := range []struct {
		name     string
		obj      *unstructured.Unstructured
		store    *refs.Store
		complete bool
		want     string
	}{
		{"no store: an error naming the kind", deployment("registry.example.com/app:1"), nil, false, "Deployment (apps/v1)"},
		{"not listed yet: an error naming the kind", deployment("registry.example.com/app:1"), store, false, "Deployment (apps/v1): not listed"},
		{"the stored copy of itself does not count", deployment("registry.example.com/app:1"), store, true, "image shared with shop/api"},
		{"an image no other uses", deployment("registry.example.com/new:1"), store, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.complete {
				store.Complete(c.GVK)
			}
			in := input(tc.obj, "alice")
			in.References = tc.store
			out := p.Evaluate(context.Background(), in)
			got := ""
			switch {
			case out.Err != nil:
				got = out.Err.Error()
			case len(out.Violations) > 0:
				got = out.Violations[0].Message
			}
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
