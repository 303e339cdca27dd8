package cel

import (
	"github.com/google/cel-go/interpreter"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"

	"github.com/tollgate-dev/tollgate/internal/cel/fastpath"
	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// activation resolves the variables of a tollgate policy's expressions as
// the apiserver's evaluationActivation does for a ValidatingAdmissionPolicy
// without params and without an authorizer bound.
type activation struct {
	r         *review
	variables any
	// references is the policy's references variable, nil without
	// declarations (then not bound).
	references any
	// offPath: an untracked evaluation under it left what the bound
	// assumes (fastpath's guards).
	offPath bool
}

// MarkOffPath is fastpath.OffPath's.
func (a *activation) MarkOffPath() { a.offPath = true }

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case fastpath.OffPathName:
		return a, true
	case plugincel.ObjectVarName:
		return a.r.object, true
	case plugincel.OldObjectVarName:
		return a.r.oldObject, true
	case plugincel.ParamsVarName:
		return nil, true // params may be null
	case plugincel.RequestVarName:
		return a.r.request, true
	case plugincel.NamespaceVarName:
		return a.r.namespace, true
	case plugincel.VariableVarName:
		return a.variables, true
	case refs.Variable:
		return a.references, a.references != nil
	default: // authorizer and authorizer.requestResource: none bound
		return nil, false
	}
}

func (a *activation) Parent() interpreter.Activation { return nil }
