package cel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel"
)

// checkFast runs CheckFast for every program on one input, reporting its
// problems; it returns how many bounds were checked and results compared.
func checkFast(t *testing.T, programs []named, name string, in func() *cel.Input) (bounded, compared int, tightest float64) {
	t.Helper()
	input := in()
	for _, p := range programs {
		c := p.p.CheckFast(context.Background(), input)
		for _, problem := range c.Problems {
			t.Errorf("%s on %s: %s", p.name, name, problem)
		}
		bounded, compared = bounded+c.Bounded, compared+c.Compared
		if c.Tightest > 0 && (tightest == 0 || c.Tightest < tightest) {
			tightest = c.Tightest
		}
	}
	return bounded, compared, tightest
}

// TestCostBoundHolds: on every input, every library and corpus
// expression's bound is at least the cost the apiserver's tracked program
// reports, each policy's total bound at least what its evaluation is
// charged, and the untracked programs give the tracked programs' values
// and errors.
func TestCostBoundHolds(t *testing.T) {
	all := append(append(libraryPrograms(t), corpusPrograms(t)...), refinedPrograms(t)...)
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
	ins["large Pod"] = largePod(t)
	for _, os := range []string{"linux", "windows"} {
		for _, add := range []string{"NET_BIND_SERVICE", "SYS_ADMIN"} {
			ins[fmt.Sprintf("%s Pod adding %s", os, add)] = addingPod(t, os, add)
		}
	}
	bounded, compared, tightest := checkFast(t, budget, "review-pod-create.json", ins["review-pod-create.json"])
	for name, in := range ins {
		b, c, r := checkFast(t, programs, name, in)
		bounded, compared = bounded+b, compared+c
		if r > 0 && (tightest == 0 || r < tightest) {
			tightest = r
		}
	}
	programs = all
	t.Logf("%d programs (%d planned untracked): %d bounds checked (the tightest %.2f times the cost), %d results compared", len(programs), planned, bounded, tightest, compared)
	if bounded == 0 || compared == 0 || planned < len(programs)*9/10 {
		t.Errorf("want most programs planned (%d of %d), bounds checked (%d) and results compared (%d)", planned, len(programs), bounded, compared)
	}
}

// refinedPrograms are policies whose rules admit while the variables
// their message expressions read are not empty, as the capabilities
// policies' on Windows Pods (where their rules do not read them).
func refinedPrograms(t testing.TB) []named {
	containers := "object.spec.?initContainers.orValue([]) + object.spec.?containers.orValue([]) + object.spec.?ephemeralContainers.orValue([])"
	bad := "variables.containers.filter(c, c.?securityContext.?capabilities.?add.orValue([]).exists(x, x != 'NET_BIND_SERVICE'))"
	message := "variables.bad.map(c, '\"' + c.?name.orValue('') + '\"').join(', ') + ' must not add ' + variables.bad.map(c, c.securityContext.capabilities.add.filter(x, x != 'NET_BIND_SERVICE')).flatten().map(x, '\"' + x + '\"').join(', ')"
	var out []named
	for _, rule := range []string{"size(variables.bad) <= 1000", "size(variables.containers) >= 0"} {
		p, errs := cel.Compile(cel.Spec{Name: rule, Variables: []cel.NamedExpression{{Name: "containers", Expression: containers}, {Name: "bad", Expression: bad}},
			Validations: []cel.Validation{{Expression: rule, MessageExpression: message}}}, field.NewPath("spec"))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		out = append(out, named{"refined: " + rule, p.Count()})
	}
	return out
}

// addingPod is a Pod of the given os of 30 containers, each dropping ALL
// and adding add 50 times, its sizes scanned from its JSON.
func addingPod(t *testing.T, os, add string) func() *cel.Input {
	var containers []any
	for i := range 30 {
		adds := make([]any, 50)
		for j := range adds {
			adds[j] = add
		}
		containers = append(containers, map[string]any{"name": fmt.Sprintf("c%d", i), "image": "registry.example.com/app:1.0",
			"securityContext": map[string]any{"capabilities": map[string]any{"drop": []any{"ALL"}, "add": adds}}})
	}
	return jsonPodInput(t, map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "adding", "namespace": "shop"},
		"spec": map[string]any{"os": map[string]any{"name": os}, "containers": containers}})
}

// jsonPodInput is the input of a Pod with its JSON, from which its sizes
// are scanned.
func jsonPodInput(t testing.TB, pod map[string]any) func() *cel.Input {
	js, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	in := podInput(t, js)
	return func() *cel.Input {
		i := in()
		i.ObjectJSON = js
		return i
	}
}

// largePod is a Pod of 40 containers of every kind, each with the fields
// the library reads set, long names and images, and long annotations, its
// sizes scanned from its JSON.
func largePod(t *testing.T) func() *cel.Input {
	var containers, volumes []any
	for i := range 40 {
		c := generatedPod(^uint64(0)>>uint(i%7), int64(i), fmt.Sprintf("container-%d-%s", i, strings.Repeat("n", i*5)), "registry.example.com/"+strings.Repeat("i", i*7)+":latest")
		spec := c["spec"].(map[string]any)
		containers = append(containers, spec["containers"].([]any)...)
		volumes = append(volumes, map[string]any{"name": fmt.Sprintf("v%d", i), "hostPath": map[string]any{"path": "/"}})
	}
	// One AppArmor annotation is refused: a filter over a map lists its
	// keys in Go's (random) map order, which two evaluations need not share.
	annotations := map[string]any{"container.apparmor.security.beta.kubernetes.io/c0": "unconfined"}
	for i := range 30 {
		annotations[fmt.Sprintf("container.apparmor.security.beta.kubernetes.io/c%d", i+1)] = "localhost/" + strings.Repeat("x", 100*i)
		annotations[fmt.Sprintf("example.com/a%d", i)] = strings.Repeat("y", 100*i)
	}
	return jsonPodInput(t, map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "large", "namespace": "shop", "annotations": annotations, "labels": map[string]any{"app": "x"}},
		"spec":     map[string]any{"containers": containers, "initContainers": containers[:20], "ephemeralContainers": containers[20:], "volumes": volumes}})
}

// TestFastPathTaken: on the captured Pod, the fast path decides every
// library policy that admits it.
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
	if admitted == 0 || fast < admitted {
		t.Errorf("the fast path should decide every admitting policy: %d of %d", fast, admitted)
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
	p.Count()
	in := podInput(t, js)
	got, want := p.Evaluate(context.Background(), in()), p.EvaluateTracked(context.Background(), in())
	if !sameVerdict(got, want) {
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
		_, _, _ = checkFast(t, fuzzCorpus(t), string(js), func() *cel.Input {
			in := podInput(t, js)()
			in.ObjectJSON = js
			return in
		})
	})
}

// TestGuardedReceiver: lastIndexOf on a receiver of unknown type is
// bounded as on a string only where the fast path evaluates it guarded;
// on a deep list (Kubernetes' list overload, charged a traversal of the
// whole list) the fast path leaves and the rule fails on the per-call
// limit as in the apiserver's validator; on a string it admits.
func TestGuardedReceiver(t *testing.T) {
	var programs []*cel.Program
	for _, spec := range []cel.Spec{
		{Name: "in a rule", Validations: []cel.Validation{
			{Expression: "object.spec.containers.all(c, c.image.lastIndexOf('/') >= -1)", MessageExpression: "'image ' + object.spec.containers[0].name"},
		}},
		{Name: "in a variable", Variables: []cel.NamedExpression{
			{Name: "found", Expression: "object.spec.containers.filter(c, c.image.lastIndexOf('/') >= -1)"},
		}, Validations: []cel.Validation{
			{Expression: "size(variables.found) >= 0", MessageExpression: "variables.found.map(c, c.name).join(', ')"},
		}},
	} {
		p, errs := cel.Compile(spec, field.NewPath("spec"))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		programs = append(programs, p.Count())
	}
	pod := func(image any) []byte {
		js, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}}})
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	// 34^4 numbers: each list has at most 34 entries, their traversal
	// costs more than the per-call limit.
	deep := any(0)
	for range 4 {
		l := make([]any, 34)
		for i := range l {
			l[i] = deep
		}
		deep = l
	}
	for _, c := range []struct {
		name  string
		image any
		fast  bool
	}{{"string", "registry.example.com/app:1.0", true}, {"deep list", deep, false}} {
		js := pod(c.image)
		in := podInput(t, js)
		for i, p := range programs {
			before := p.FastAdmits()
			fast := in()
			fast.ObjectJSON = js
			got, want := p.Evaluate(context.Background(), fast), p.EvaluateTracked(context.Background(), in())
			if !sameVerdict(got, want) {
				t.Errorf("%d on %s: got  %+v\nwant %+v", i, c.name, got, want)
			}
			if took := p.FastAdmits() > before; took != c.fast {
				t.Errorf("%d on %s: fast path taken %v, want %v (outcome %+v)", i, c.name, took, c.fast, want)
			}
			if !c.fast && (want.Err == nil || !strings.Contains(want.Err.Error(), "cost")) {
				t.Errorf("%d on %s: want a cost failure, got %+v", i, c.name, want)
			}
		}
	}
}

// TestLog2Up: log2Up is the least k with 2^k >= x, at most 41 (over
// 2^40), 0 for NaN and x <= 1, as the loop it replaced counts it.
func TestLog2Up(t *testing.T) {
	loop := func(x float64) uint32 {
		k := uint32(0)
		for k <= 40 && float64(uint64(1)<<k) < x {
			k++
		}
		return k
	}
	xs := []float64{math.NaN(), math.Inf(-1), -1, 0, 0.5, 1, 1.0000001, 2, 3, 4, 4.5, 1023, 1024, 1025, 1 << 39, 1<<39 + 1, 1 << 40, 1<<40 + 1, 1 << 41, 1e300, math.Inf(1)}
	for k := range 42 {
		p := math.Ldexp(1, k)
		xs = append(xs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)))
	}
	for _, x := range xs {
		if got, want := cel.Log2Up(x), loop(x); got != want {
			t.Errorf("log2Up(%v) = %d, want %d", x, got, want)
		}
	}
}

// TestTrackedOnly: an input marked TrackedOnly (--cel-fast-path=false)
// is decided on the tracked path alone, as the fast path decides it.
func TestTrackedOnly(t *testing.T) {
	programs := libraryPrograms(t)
	in := inputs(t)["review-pod-create.json"]
	for _, p := range programs {
		before := p.p.FastAdmits()
		slow := fastInput(in())
		slow.TrackedOnly = true
		got := p.p.Evaluate(context.Background(), slow)
		if p.p.FastAdmits() != before {
			t.Errorf("%s: the fast path decided a TrackedOnly input", p.name)
		}
		if want := p.p.Evaluate(context.Background(), fastInput(in())); !sameVerdict(got, want) {
			t.Errorf("%s: tracked %+v, fast %+v", p.name, got, want)
		}
	}
	var fast int64
	for _, p := range programs {
		fast += p.p.FastAdmits()
	}
	if fast == 0 {
		t.Error("the fast path decided nothing without TrackedOnly")
	}
}
