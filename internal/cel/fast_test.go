package cel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel"
)

// checkFast runs CheckFast for every program on one input, reporting its
// problems; it returns how many bounds were checked and results compared.
func checkFast(t *testing.T, programs []named, name string, in func() *cel.Input) (bounded, compared int) {
	t.Helper()
	input := in()
	for _, p := range programs {
		c := p.p.CheckFast(context.Background(), input)
		for _, problem := range c.Problems {
			t.Errorf("%s on %s: %s", p.name, name, problem)
		}
		bounded, compared = bounded+c.Bounded, compared+c.Compared
	}
	return bounded, compared
}

// TestCostBoundHolds: on every input, every library and corpus
// expression's bound is at least the cost the apiserver's tracked program
// reports, each policy's total bound at least what its evaluation is
// charged, and the untracked programs give the tracked programs' values
// and errors.
func TestCostBoundHolds(t *testing.T) {
	all := append(libraryPrograms(t), corpusPrograms(t)...)
	var programs, budget []named
	planned := 0
	for _, p := range all {
		if p.p.Planned() {
			planned++
		}
		if strings.HasPrefix(p.name, "budget.yaml: ") { // each costs a second: on one input
			budget = append(budget, p)
		} else {
			programs = append(programs, p)
		}
	}
	ins := inputs(t)
	bounded, compared := checkFast(t, budget, "review-pod-create.json", ins["review-pod-create.json"])
	for name, in := range ins {
		b, c := checkFast(t, programs, name, in)
		bounded, compared = bounded+b, compared+c
	}
	programs = all
	t.Logf("%d programs (%d planned untracked): %d bounds checked, %d results compared", len(programs), planned, bounded, compared)
	if bounded == 0 || compared == 0 || planned < len(programs)*9/10 {
		t.Errorf("want most programs planned (%d of %d), bounds checked (%d) and results compared (%d)", planned, len(programs), bounded, compared)
	}
}

// TestFastPathTaken: on the captured Pod, the fast path decides most
// library policies that admit it.
func TestFastPathTaken(t *testing.T) {
	in := inputs(t)["review-pod-create.json"]()
	var admitted, fast int
	for _, p := range libraryPrograms(t) {
		before := p.p.FastAdmits()
		out := p.p.Evaluate(context.Background(), in)
		if out.Skipped || out.Err != nil || len(out.Violations) > 0 {
			continue
		}
		admitted++
		if p.p.FastAdmits() > before {
			fast++
		} else {
			t.Logf("%s: admitted on the tracked path", p.name)
		}
	}
	t.Logf("fast path: %d of %d admitting library policies", fast, admitted)
	if admitted == 0 || fast*10 < admitted*8 {
		t.Errorf("the fast path should decide most admitting policies: %d of %d", fast, admitted)
	}
}

// TestNoBoundBudget: with nested comprehensions over a large list no
// bound holds, and the policy fails on the cost limit as the apiserver's
// validator does.
func TestNoBoundBudget(t *testing.T) {
	var containers []any
	for i := range 2000 {
		containers = append(containers, map[string]any{"name": fmt.Sprintf("c%d", i), "image": "i"})
	}
	js, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{"containers": containers}})
	if err != nil {
		t.Fatal(err)
	}
	p, errs := cel.Compile(cel.Spec{Name: "nested", Validations: []cel.Validation{
		{Expression: "object.spec.containers.all(a, object.spec.containers.all(b, a.name != b.name || a == b))"},
	}}, field.NewPath("spec"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	in := podInput(t, js)
	got, want := p.Evaluate(context.Background(), in()), p.EvaluateReference(context.Background(), in())
	if !sameOutcome(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if want.Err == nil || !strings.Contains(want.Err.Error(), "cost") {
		t.Errorf("want a cost error, got %+v", want)
	}
	if p.FastAdmits() != 0 {
		t.Errorf("the fast path decided a policy it cannot bound")
	}
	// The same policy on a small Pod takes the fast path.
	small := podInput(t, []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"i"},{"name":"b","image":"i"}]}}`))
	if out := p.Evaluate(context.Background(), small()); out.Err != nil || len(out.Violations) > 0 || p.FastAdmits() != 1 {
		t.Errorf("on a small Pod: %+v, fast admits %d", out, p.FastAdmits())
	}
}

// FuzzCostBoundHolds is TestCostBoundHolds on generated Pods, their
// sizes scanned from their JSON.
func FuzzCostBoundHolds(f *testing.F) {
	addPodSeeds(f)
	f.Fuzz(func(t *testing.T, bits uint64, n int64, name, image string) {
		js, err := json.Marshal(generatedPod(bits, n, name, image))
		if err != nil {
			t.Fatal(err)
		}
		// The review's bytes too, as the engine hands them: sizes are
		// then scanned from them.
		checkFast(t, fuzzCorpus(t), string(js), func() *cel.Input {
			in := podInput(t, js)()
			in.ObjectJSON = js
			return in
		})
	})
}
