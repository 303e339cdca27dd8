package analysis

import (
	"fmt"
	"slices"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"

	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// ReferenceProblems are what an expression reads of references that its
// declarations cannot answer: a reference not declared, an index a
// reference does not declare (byKey's index must be a string literal, its
// receiver references.<name>), or references read other than as
// references.<name>. An expression that does not parse has none: the
// compiler reports it.
func ReferenceProblems(text string, declared map[string]*refs.Compiled) []string {
	root, _, ok := parse(text)
	if !ok {
		return nil
	}
	names := declaredNames(declared)
	var out []string
	idents, selects := 0, 0
	celast.PreOrderVisit(root, celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.IdentKind:
			if e.AsIdent() == refs.Variable {
				idents++
			}
		case celast.SelectKind:
			s := e.AsSelect()
			if name, ok := referenceSelect(e); ok {
				selects++
				if declared[name] == nil {
					out = append(out, fmt.Sprintf("references.%s is not declared in spec.references (declared: %v)", name, names))
				} else if s.IsTestOnly() {
					out = append(out, fmt.Sprintf("has(references.%s) is always true: it is declared", name))
				}
			}
		case celast.CallKind:
			call := e.AsCall()
			if call.FunctionName() != "byKey" || !call.IsMemberFunction() {
				return
			}
			name, ok := referenceSelect(call.Target())
			if !ok {
				out = append(out, "byKey's receiver must be references.<name>, so that its index can be checked when the policy loads")
				return
			}
			c := declared[name]
			if c == nil || len(call.Args()) != 2 {
				return
			}
			arg := call.Args()[0]
			lit, isString := types.String(""), false
			if arg.Kind() == celast.LiteralKind {
				lit, isString = arg.AsLiteral().(types.String)
			}
			switch {
			case !isString:
				out = append(out, fmt.Sprintf("references.%s.byKey: the index must be a string literal (declared: %v)", name, c.IndexNames()))
			case !c.HasIndex(string(lit)):
				out = append(out, fmt.Sprintf("references.%s has no index %q (declared: %v)", name, string(lit), c.IndexNames()))
			}
		}
	}))
	if idents > selects {
		out = append(out, "references is read only as references.<name>")
	}
	return out
}

// referenceSelect is the name of references.<name>, when e is that.
func referenceSelect(e celast.Expr) (string, bool) {
	if e.Kind() != celast.SelectKind {
		return "", false
	}
	s := e.AsSelect()
	if op := s.Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == refs.Variable {
		return s.FieldName(), true
	}
	return "", false
}

func declaredNames(declared map[string]*refs.Compiled) []string {
	out := make([]string, 0, len(declared))
	for n := range declared {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
