package cel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
		got, want := p.Evaluate(context.Background(), fastInput(in())), p.EvaluateTracked(context.Background(), trackedInput(in()))
		if !sameVerdict(got, want) {
			t.Errorf("%s:\n got  %+v\n want %+v", name, got, want)
		}
	}
}

// TestDirectRequestAndMaps: the request's fields and comprehensions over
// maps, on inputs chosen for where the direct evaluator must give up:
// a field the apiserver's request leaves out when empty, a result the
// map's order could change, a repeated name. want is whether it gives
// the rule a value (then CheckDirect requires cel-go's), plan whether it
// has one at all.
func TestDirectRequestAndMaps(t *testing.T) {
	const (
		two      = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"a":"1","b":"2"}}}`
		repeated = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"a":"1","a":"2"}}}`
		none     = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`
	)
	// Twenty names, the first repeated last: past 16, keys looks for
	// repeats in a map rather than pairwise.
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, `"k%d":"v",`, i)
	}
	manyRepeated := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{` + b.String() + `"k0":"w"}}}`
	for _, c := range []struct {
		rule, obj, ns string
		plan, want    bool
	}{
		{"request.namespace == 'default'", none, "default", true, true},
		{"request.namespace == 'default'", none, "", true, false}, // left out: no such key
		{"request.name == 'n'", none, "", true, true},
		{"request.operation == 'CREATE'", none, "", true, true},
		{"request.subResource == ''", none, "shop", true, false},
		{"request.userInfo.username == 'alice'", none, "shop", false, false},
		{"has(request.namespace)", none, "shop", false, false},
		{"size(object.metadata.annotations.filter(k, k != 'a')) == 1", two, "shop", true, true},
		{"size(object.metadata.annotations.filter(k, true)) == 2", two, "shop", true, false}, // two keys: their order is cel-go's
		{"object.metadata.annotations.map(k, k)[0] == 'a'", two, "shop", true, false},
		{"object.metadata.annotations.all(k, size(k) == 1)", two, "shop", true, true},
		{"object.metadata.annotations.exists(k, k == 'b')", two, "shop", true, true},
		{"object.metadata.annotations.exists_one(k, k == 'b')", two, "shop", true, true},
		{"object.metadata.annotations.exists_one(k, k == 'a')", repeated, "shop", true, false}, // one key in cel-go's map
		{"object.metadata.annotations.exists_one(k, k == 'k0')", manyRepeated, "shop", true, false},
		{"object.metadata.?annotations.orValue({}).all(k, false)", none, "shop", true, true},
	} {
		p, errs := cel.Compile(cel.Spec{Name: "case", Validations: []cel.Validation{{Expression: c.rule}}}, field.NewPath("spec"))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		in, err := requestInput([]byte(c.obj), nil, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "CREATE", c.ns, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := p.CheckDirect(fastInput(in))
		for _, problem := range got.Problems {
			t.Errorf("%s (namespace %q): %s", c.rule, c.ns, problem)
		}
		if plan, given := got.Planned == 1, got.Compared == 1; plan != c.plan || given != c.want {
			t.Errorf("%s on %s (namespace %q): planned %v, given a value %v; want %v, %v", c.rule, c.obj, c.ns, plan, given, c.plan, c.want)
		}
	}
}
