package kyverno

import (
	celgo "github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"

	celbound "github.com/tollgate-dev/tollgate/internal/cel/bound"
)

// env is Kyverno's environment, with its resource library on lib
// when a policy calls it.
func env(lib *library) (*environment.EnvSet, error) {
	opts := []environment.VersionedOptions{{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions: []celgo.EnvOption{
			celgo.CrossTypeNumericComparisons(true),
			ext.Bindings(),
			ext.Encoders(),
			ext.Math(),
			ext.Protos(),
			ext.Regex(ext.RegexVersion(1)),
			celgo.Macros(celgo.ReceiverMacro("orValue", 1, orValueCompatMacro)),
			celgo.Function(celbound.OrValueCompat,
				celgo.Overload(celbound.OrValueCompat+"_dyn_dyn", []*celgo.Type{celgo.DynType, celgo.DynType}, celgo.DynType,
					celgo.BinaryBinding(orValueCompat))),
		},
	}}
	if lib != nil {
		opts = append(opts, resourceOptions(lib))
	}
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(opts...)
}

// orValueCompatMacro rewrites x.orValue(y) to __orValueCompat__(x, y), as
// Kyverno's orValueCompatMacro does.
func orValueCompatMacro(eh celgo.MacroExprFactory, target celast.Expr, args []celast.Expr) (celast.Expr, *celgo.Error) {
	return eh.NewCall(celbound.OrValueCompat, target, args[0]), nil
}

// orValueCompat is Kyverno's __orValueCompat__: an optional's value or y
// when it has none, y for an error, and any other value itself.
func orValueCompat(lhs, rhs ref.Val) ref.Val {
	switch v := lhs.(type) {
	case *types.Optional:
		if v.HasValue() {
			return v.GetValue()
		}
		return rhs
	case *types.Err:
		return rhs
	default:
		return lhs
	}
}
