package cel

import (
	celgo "github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"k8s.io/apiserver/pkg/cel/environment"
)

// References tells whether any of the expressions refers to the top-level
// variable name (e.g. namespaceObject), by walking their parsed syntax
// trees: a name in a string or a field called so does not count. An
// expression that does not parse counts as referring to it, so that a
// caller never concludes a variable is unused from what it could not read.
func References(name string, expressions ...string) bool {
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
	if err != nil {
		return true
	}
	for _, e := range expressions {
		if e != "" && references(env, name, e) {
			return true
		}
	}
	return false
}

func references(env *celgo.Env, name, expression string) bool {
	ast, iss := env.Parse(expression)
	if iss.Err() != nil {
		return true
	}
	found := false
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() == celast.IdentKind && e.AsIdent() == name {
			found = true
		}
	}))
	return found
}
