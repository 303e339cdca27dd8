package cel_test

import (
	"testing"

	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
	"github.com/tollgate-dev/tollgate/internal/cel"
)

// checkDirect runs CheckDirect for every program on one input, reporting
// each problem, and returns the counts.
func checkDirect(t *testing.T, programs []named, name string, in func() *cel.Input) (planned, compared int) {
	t.Helper()
	input := fastInput(in())
	for _, p := range programs {
		c := p.p.CheckDirect(input)
		for _, problem := range c.Problems {
			t.Errorf("%s on %s: %s", p.name, name, problem)
		}
		planned, compared = planned+c.Planned, compared+c.Compared
	}
	return planned, compared
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
	var planned, compared int
	for name, in := range inputs(t) {
		p, c := checkDirect(t, programs, name, in)
		planned, compared = planned+p, compared+c
	}
	var direct int
	var not []string
	for _, p := range programs {
		if p.p.Direct() {
			direct++
		} else {
			not = append(not, p.name)
		}
	}
	t.Logf("%d programs, %d with every rule planned (not: %v): %d evaluations planned, %d given a value and compared", len(programs), direct, not, planned, compared)
	if compared < planned/2 {
		t.Errorf("the direct evaluator gave a value for %d of %d planned evaluations, want at least half", compared, planned)
	}
}
