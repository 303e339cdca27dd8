package cel_test

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
	"github.com/tollgate-dev/tollgate/internal/cel"
)

// checkDirect runs CheckDirect for every program on one input, reporting
// each problem, and returns the counts.
func checkDirect(t *testing.T, programs []named, name string, in func() *cel.Input) (total cel.DirectCheck) {
	t.Helper()
	input := fastInput(in())
	for _, p := range programs {
		c := p.p.CheckDirect(input)
		for _, problem := range c.Problems {
			t.Errorf("%s on %s: %s", p.name, name, problem)
		}
		total.Planned, total.Compared = total.Planned+c.Planned, total.Compared+c.Compared
		total.Sizes, total.SameSizes = total.Sizes+c.Sizes, total.SameSizes+c.SameSizes
	}
	return total
}

// TestDirectAsCEL: wherever the direct evaluator gives a value for an
// expression (variable, rule or message expression) of a library,
// corpus or field-check policy, on every input, it is cel-go's.
func TestDirectAsCEL(t *testing.T) {
	programs := append(libraryPrograms(t), corpusPrograms(t)...)
	set, err := benchpolicies.FieldChecks(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range set.Groups {
		for _, p := range g.Policies {
			programs = append(programs, named{p.Name(), p.Program()})
		}
	}
	var total cel.DirectCheck
	for name, in := range inputs(t) {
		c := checkDirect(t, programs, name, in)
		total.Planned, total.Compared = total.Planned+c.Planned, total.Compared+c.Compared
		total.Sizes, total.SameSizes = total.Sizes+c.Sizes, total.SameSizes+c.SameSizes
	}
	planned, compared := total.Planned, total.Compared
	var direct int
	var not []string
	for _, p := range programs {
		if p.p.Direct() {
			direct++
		} else {
			not = append(not, p.name)
		}
	}
	t.Logf("%d programs, %d with every rule planned (not: %v): %d evaluations planned, %d given a value and compared; variables' sizes %d of %d the same", len(programs), direct, not, planned, compared, total.SameSizes, total.Sizes)
	if compared < planned/2 {
		t.Errorf("the direct evaluator gave a value for %d of %d planned evaluations, want at least half", compared, planned)
	}
}

// TestDirectManyVariables: a policy with more variables than a frame
// holds, and one with no rule, decide as the validator does.
func TestDirectManyVariables(t *testing.T) {
	var vars []cel.NamedExpression
	for i := range 20 {
		vars = append(vars, cel.NamedExpression{Name: fmt.Sprintf("v%d", i), Expression: fmt.Sprintf("object.spec.containers.size() > %d", i)})
	}
	in := inputs(t)["review-pod-create.json"]
	for name, spec := range map[string]cel.Spec{
		"20 variables": {Name: "many", Variables: vars, Validations: []cel.Validation{{Expression: "variables.v19 || variables.v0", Message: "few containers"}}},
		"no rule":      {Name: "none", Variables: vars},
	} {
		p, errs := cel.Compile(spec, field.NewPath("spec"))
		if len(errs) > 0 {
			t.Fatal(name, errs)
		}
		got, want := p.Evaluate(context.Background(), fastInput(in())), p.EvaluateReference(context.Background(), referenceInput(in()))
		if !sameOutcome(got, want) {
			t.Errorf("%s:\n got  %+v\n want %+v", name, got, want)
		}
	}
}
