package analysis

import (
	celast "github.com/google/cel-go/common/ast"
	"k8s.io/apiserver/pkg/cel/environment"
)

// parse is text's syntax tree, parsed as the apiserver parses stored
// expressions. ok is false when it does not parse or is empty.
func parse(text string) (e celast.Expr, info *celast.SourceInfo, ok bool) {
	if text == "" {
		return nil, nil, false
	}
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
	if err != nil {
		return nil, nil, false
	}
	ast, iss := env.Parse(text)
	if iss.Err() != nil {
		return nil, nil, false
	}
	return ast.NativeRep().Expr(), ast.NativeRep().SourceInfo(), true
}
