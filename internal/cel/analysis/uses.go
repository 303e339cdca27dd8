package analysis

import (
	"slices"
	"strings"

	celast "github.com/google/cel-go/common/ast"
)

// Uses tells whether any of the expressions uses the top-level variable
// name (e.g. namespaceObject). A name in a string, or a field called so,
// does not count. An expression that does not parse counts as using it.
func Uses(name string, expressions ...string) bool {
	for _, text := range expressions {
		if text == "" {
			continue
		}
		e, _, ok := parse(text)
		if !ok {
			return true
		}
		found := false
		celast.PreOrderVisit(e, celast.NewExprVisitor(func(e celast.Expr) {
			if e.Kind() == celast.IdentKind && e.AsIdent() == name {
				found = true
			}
		}))
		if found {
			return true
		}
	}
	return false
}

// RenameIdent renames the top-level variable from to to in an expression.
// A name in a string, or a field called so, is left alone. An expression
// that does not parse is returned as it is, for the compiler to report.
func RenameIdent(expression, from, to string) string {
	e, info, ok := parse(expression)
	if !ok {
		return expression
	}
	ranges := info.OffsetRanges()
	var starts []int32
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(e celast.Expr) {
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
	n := len([]rune(from))
	var b strings.Builder
	last := 0
	for _, s := range starts {
		at := int(s)
		if at < last || at+n > len(runes) || string(runes[at:at+n]) != from {
			return expression // not where the parser said: leave it to the compiler
		}
		b.WriteString(string(runes[last:at]))
		b.WriteString(to)
		last = at + n
	}
	b.WriteString(string(runes[last:]))
	return b.String()
}

// Fields are the fields selected of the top-level variable name in an
// expression (name.field), in order. They are nil when it does not parse.
func Fields(expression, name string) []string {
	e, _, ok := parse(expression)
	if !ok {
		return nil
	}
	var out []string
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.SelectKind {
			return
		}
		if op := e.AsSelect().Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == name {
			out = append(out, e.AsSelect().FieldName())
		}
	}))
	return out
}

// Selected are the fields selected of the top-level variable name in the
// expressions, and whole is true when some use of it is not a field
// selection (the variable passed, compared or iterated whole) or an
// expression does not parse.
func Selected(name string, expressions ...string) (fields []string, whole bool) {
	for _, text := range expressions {
		if text == "" {
			continue
		}
		e, _, ok := parse(text)
		if !ok {
			return fields, true
		}
		idents, selects := 0, 0
		celast.PreOrderVisit(e, celast.NewExprVisitor(func(e celast.Expr) {
			switch e.Kind() {
			case celast.IdentKind:
				if e.AsIdent() == name {
					idents++
				}
			case celast.SelectKind:
				if op := e.AsSelect().Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == name {
					selects++
					fields = append(fields, e.AsSelect().FieldName())
				}
			}
		}))
		if idents > selects {
			whole = true
		}
	}
	return fields, whole
}
