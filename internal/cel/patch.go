package cel

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Patches are CEL expressions that each return a list of JSONPatch values,
// evaluated as a MutatingAdmissionPolicy's JSONPatch mutations are, by the
// apiserver's own patcher.
type Patches struct {
	patchers []patch.Patcher
}

// CompilePatches compiles the expressions; path names their list.
func CompilePatches(expressions []string, path *field.Path) (*Patches, field.ErrorList) {
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return nil, field.ErrorList{field.InternalError(path, err)}
	}
	decls := plugincel.OptionalVariableDeclarations{HasPatchTypes: true}
	var errs field.ErrorList
	p := &Patches{}
	for i, e := range expressions {
		ev := compiler.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: e}, decls, environment.StoredExpressions)
		for _, ce := range ev.CompilationErrors() {
			errs = append(errs, field.Invalid(path.Index(i).Child("expression"), e, ce.Error()))
		}
		p.patchers = append(p.patchers, patch.NewJSONPatcher(ev))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// objectInterfaces serve unstructured objects, which encode themselves.
var objectInterfaces = k8sadmission.NewObjectInterfacesFromScheme(runtime.NewScheme())

// Apply runs every patch in order, each on the result of the one before,
// and returns the patched object; in.Object is not modified.
func (p *Patches) Apply(ctx context.Context, in *Input) (runtime.Object, error) {
	obj, old, err := in.Objects()
	if err != nil {
		return nil, err
	}
	for i, pt := range p.patchers {
		va := &k8sadmission.VersionedAttributes{Attributes: in.attributes(obj, old), VersionedKind: in.Kind,
			VersionedObject: k8sadmission.NewLazyObject(obj), VersionedOldObject: k8sadmission.NewLazyObject(old)}
		out, err := pt.Patch(ctx, patch.Request{
			MatchedResource:     in.Resource,
			VersionedAttributes: va,
			ObjectInterfaces:    objectInterfaces,
			Namespace:           in.NamespaceObject,
		}, celconfig.RuntimeCELCostBudget)
		if err != nil {
			return nil, fmt.Errorf("patches[%d]: %w", i, err)
		}
		obj = out
	}
	return obj, nil
}
