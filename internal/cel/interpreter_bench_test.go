package cel_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/interpreter"

	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
)

// BenchmarkInterpreter is what cel-go's interpreter alone takes for the
// two rules of one of BenchmarkPolicies' field checks on the captured Pod:
// a bare environment (object as dyn), the object decoded by encoding/json
// beforehand, no Kubernetes libraries, no policy around it; untracked and
// with cost tracking as the apiserver's programs have it. It is the floor
// under the cost of an added policy, whoever evaluates CEL with cel-go.
func BenchmarkInterpreter(b *testing.B) {
	body, err := os.ReadFile("../admission/testdata/review-pod-create.json")
	if err != nil {
		b.Fatal(err)
	}
	var review struct {
		Request struct {
			Object map[string]any `json:"object"`
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &review); err != nil {
		b.Fatal(err)
	}
	act, err := interpreter.NewActivation(map[string]any{"object": review.Request.Object})
	if err != nil {
		b.Fatal(err)
	}
	env, err := cel.NewEnv(cel.Variable("object", cel.DynType))
	if err != nil {
		b.Fatal(err)
	}
	for _, side := range []struct {
		name string
		opts []cel.ProgramOption
	}{
		{"untracked", nil},
		{"tracked", []cel.ProgramOption{cel.CostTracking(nil), cel.CostLimit(1_000_000)}},
	} {
		var progs []cel.Program
		for _, rule := range benchpolicies.FieldCheckRules(1) {
			ast, iss := env.Compile(rule)
			if iss.Err() != nil {
				b.Fatal(iss.Err())
			}
			prog, err := env.Program(ast, side.opts...)
			if err != nil {
				b.Fatal(err)
			}
			progs = append(progs, prog)
		}
		b.Run(side.name, func(b *testing.B) {
			for b.Loop() {
				for _, prog := range progs {
					if out, _, err := prog.Eval(act); err != nil || out.Value() != true {
						b.Fatal(out, err)
					}
				}
			}
		})
	}
}
