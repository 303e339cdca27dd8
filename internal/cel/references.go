package cel

import (
	"slices"
	"strings"

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

// RenameIdent renames the top-level variable from to to in an expression,
// by its parsed syntax tree: a name in a string or a field called so is
// left alone. An expression that does not parse is returned as it is, for
// the compiler to report.
func RenameIdent(expression, from, to string) string {
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
	if err != nil || expression == "" {
		return expression
	}
	ast, iss := env.Parse(expression)
	if iss.Err() != nil {
		return expression
	}
	native := ast.NativeRep()
	ranges := native.SourceInfo().OffsetRanges()
	var starts []int32
	celast.PreOrderVisit(native.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() == celast.IdentKind && e.AsIdent() == from {
			if r, ok := ranges[e.ID()]; ok {
				starts = append(starts, r.Start)
			}
		}
	}))
	if len(starts) == 0 {
		return expression
	}
	slices.Sort(starts)
	runes := []rune(expression) // offsets count code points
	var b strings.Builder
	last := 0
	for _, s := range starts {
		at := int(s)
		if at < last || at+len([]rune(from)) > len(runes) || string(runes[at:at+len([]rune(from))]) != from {
			return expression // not where the parser said: leave it to the compiler
		}
		b.WriteString(string(runes[last:at]))
		b.WriteString(to)
		last = at + len([]rune(from))
	}
	b.WriteString(string(runes[last:]))
	return b.String()
}

// Fields are the fields selected of the top-level variable name in an
// expression (name.field), by its parsed syntax tree, in order; nil when
// it does not parse.
func Fields(expression, name string) []string {
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
	if err != nil || expression == "" {
		return nil
	}
	ast, iss := env.Parse(expression)
	if iss.Err() != nil {
		return nil
	}
	var out []string
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.SelectKind {
			return
		}
		if op := e.AsSelect().Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == name {
			out = append(out, e.AsSelect().FieldName())
		}
	}))
	return out
}
