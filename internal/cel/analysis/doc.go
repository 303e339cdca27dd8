// Package analysis reads CEL expressions without running them. It finds
// which variables an expression uses, which fields of the object it may
// read, and what it reads of a policy's declared references. It parses
// with the apiserver's base environment and keeps no state: evaluation
// (internal/cel) and analysis share nothing but the syntax tree.
//
// Every answer errs on the safe side. An expression that does not parse
// uses every variable and may read every field, so that no caller drops
// what it could not read.
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
