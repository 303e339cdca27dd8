package cel

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
)

func deployment(image string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": image}},
		}}},
	}}
}

func input(obj *unstructured.Unstructured, username string) *Input {
	return &Input{
		Object: obj, Kind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Name:     "web", Namespace: "shop", Operation: "CREATE", User: &user.DefaultInfo{Name: username},
	}
}

var pinned = Spec{
	Name:       "pinned",
	Conditions: []NamedExpression{{Name: "not-bot", Expression: "request.userInfo.username != 'system:serviceaccount:ci:bot'"}},
	Variables:  []NamedExpression{{Name: "containers", Expression: "object.spec.template.spec.containers"}},
	Validations: []Validation{{
		Expression:        "variables.containers.all(c, !c.image.endsWith(':latest'))",
		MessageExpression: "'image ' + variables.containers.filter(c, c.image.endsWith(':latest'))[0].image + ' is not pinned'",
		Reason:            "Invalid",
	}, {
		Expression: "variables.containers.all(c, c.image.startsWith('registry.example.com/'))",
		Message:    "images come from registry.example.com",
	}},
}

func TestEvaluate(t *testing.T) {
	p, errs := Compile(pinned, field.NewPath("spec", "validate"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	tests := []struct {
		name    string
		in      *Input
		skipped bool
		want    []Violation
	}{
		{"pinned, allowed registry", input(deployment("registry.example.com/app:1.2"), "alice"), false, nil},
		{"latest", input(deployment("registry.example.com/app:latest"), "alice"), false,
			[]Violation{{Message: "image registry.example.com/app:latest is not pinned", Reason: "Invalid"}}},
		{"both rules fail", input(deployment("docker.io/app:latest"), "alice"), false,
			[]Violation{{Message: "image docker.io/app:latest is not pinned", Reason: "Invalid"}, {Message: "images come from registry.example.com", Reason: "Invalid", Rule: 1}}},
		{"condition false", input(deployment("docker.io/app:latest"), "system:serviceaccount:ci:bot"), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := p.Evaluate(context.Background(), tt.in)
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			if out.Skipped != tt.skipped || len(out.Violations) != len(tt.want) {
				t.Fatalf("got %+v, want skipped=%v %+v", out, tt.skipped, tt.want)
			}
			for i := range tt.want {
				if out.Violations[i] != tt.want[i] {
					t.Errorf("violation %d = %+v, want %+v", i, out.Violations[i], tt.want[i])
				}
			}
		})
	}
}

func TestKubernetesLibraries(t *testing.T) {
	spec := Spec{Name: "libs", Validations: []Validation{
		{Expression: "quantity('200Mi').isLessThan(quantity('1Gi'))"},
		{Expression: "'abc-1'.matches('^[a-z]+-[0-9]$')"},
		{Expression: "isURL('https://example.com/x') && url('https://example.com/x').getHost() == 'example.com'"},
		{Expression: "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))"},
		{Expression: "[1, 2, 3].isSorted() && [3, 1].max() == 3"},
		{Expression: "format.dns1123Label().validate('ok-name').hasValue() == false"},
	}}
	p, errs := Compile(spec, field.NewPath("spec"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	out := p.Evaluate(context.Background(), input(deployment("x"), "alice"))
	if out.Err != nil || len(out.Violations) != 0 {
		t.Errorf("%+v", out)
	}
}

func TestCompileErrors(t *testing.T) {
	spec := Spec{
		Name:        "broken",
		Variables:   []NamedExpression{{Name: "v", Expression: "object.spec.("}},
		Conditions:  []NamedExpression{{Name: "c", Expression: "1 + 'a'"}},
		Validations: []Validation{{Expression: "object.metadata.name"}, {Expression: "true", MessageExpression: "42"}},
	}
	_, errs := Compile(spec, field.NewPath("spec", "validate"))
	got := errs.ToAggregate().Error()
	for _, want := range []string{"spec.validate.variables[0].expression", "spec.match.conditions[0].expression", "spec.validate.expressions[0].expression", "must evaluate to bool", "spec.validate.expressions[1].messageExpression"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
}
