package fastpath

import (
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/google/cel-go/interpreter"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/environment"
)

// compiled is expr as the apiserver's compiler compiles a validation.
func compiled(t *testing.T, decls plugincel.OptionalVariableDeclarations, expr string) plugincel.CompilationResult {
	t.Helper()
	c, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	return c.CompileCELExpression(&validating.ValidationCondition{Expression: expr}, decls, environment.StoredExpressions)
}

// TestPlanReadsTheEnvironment: every environment the apiserver's compiler
// makes (params, authorizer, patch types) gives a program Plan reads.
func TestPlanReadsTheEnvironment(t *testing.T) {
	for _, params := range []bool{false, true} {
		for _, authz := range []bool{false, true} {
			for _, patch := range []bool{false, true} {
				d := plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: authz, HasPatchTypes: patch}
				res := compiled(t, d, "object.metadata.name.matches('^a') && optional.of(1).orValue(2) == 1")
				if res.Error != nil {
					t.Fatalf("%+v: %v", d, res.Error)
				}
				if _, ok := res.Program.(compiledEnv); !ok {
					t.Fatalf("%+v: %T no longer has its environment's methods", d, res.Program)
				}
				if _, err := untrackedOf(res.Program, res.ExpressionAccessor.GetExpression()); err != nil {
					t.Errorf("%+v: %v", d, err)
				}
			}
		}
	}
}

// TestLibrariesReadAt: libraries.go was read from these versions. On an
// upgrade, read each library's ProgramOptions again, then change them.
func TestLibrariesReadAt(t *testing.T) {
	want := map[string]string{"github.com/google/cel-go": "v0.30.0", "k8s.io/apiserver": "v0.37.2"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info")
	}
	for _, dep := range info.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		if v, ok := want[dep.Path]; ok {
			if dep.Version != v {
				t.Errorf("%s is %s: libraries.go was read at %s", dep.Path, dep.Version, v)
			}
			delete(want, dep.Path)
		}
	}
	for path := range want {
		t.Errorf("%s is not a dependency", path)
	}
}

// TestOptionalOrAsTracked: untracked programs give what tracked ones give
// where or and orValue short-circuit, and where regex constants are
// compiled.
func TestOptionalOrAsTracked(t *testing.T) {
	object := map[string]any{"spec": map[string]any{"replicas": int64(3)}, "metadata": map[string]any{"name": "web-1"}}
	for _, expr := range []string{
		"optional.of(2).orValue(1/0) == 2",
		"optional.none().orValue(1/0) == 2",
		"optional.of(1/0).orValue(2) == 2",
		"object.?spec.replicas.orValue(1/0) == 3",
		"object.?spec.missing.orValue(1/0) == 3",
		"object.?spec.missing.orValue(4) == 4",
		"object.?spec.replicas.or(optional.of(1/0)).value() == 3",
		"object.?spec.missing.or(optional.of(1/0)).hasValue()",
		"object.?spec.missing.or(optional.of(5)).value() == 5",
		"object.?spec.missing.or(optional.none()).hasValue()",
		"object.metadata.name.find('[0-9]+') == '1'",
		"object.metadata.name.findAll('[a-z]') == ['w', 'e', 'b']",
		"object.metadata.name.matches('^w.b-[0-9]$')",
		"object.metadata.name.find(object.metadata.name) == 'web-1'",
	} {
		res := compiled(t, plugincel.OptionalVariableDeclarations{}, expr)
		if res.Error != nil {
			t.Fatalf("%s: %v", expr, res.Error)
		}
		u := Plan(res)
		if u == nil {
			t.Fatalf("%s: not planned", expr)
		}
		act, err := interpreter.NewActivation(map[string]any{"object": object})
		if err != nil {
			t.Fatal(err)
		}
		want, _, werr := res.Program.Eval(act)
		got, gerr := u.Eval(act)
		if fmt.Sprint(got, gerr) != fmt.Sprint(want, werr) {
			t.Errorf("%s: untracked %v, %v; tracked %v, %v", expr, got, gerr, want, werr)
		}
	}
}
