package cel

import (
	"fmt"
	"slices"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/environment"

	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// checkReferences refuses, at load time, a read of references the
// declarations cannot answer: a reference not declared, an index a
// reference does not declare (byKey's index must be a string literal, its
// receiver references.<name>), references read other than as
// references.<name>, or read by a match condition (the apiserver's matcher
// evaluates those, which binds no references).
func checkReferences(spec Spec, path *field.Path) field.ErrorList {
	if len(spec.References) == 0 {
		return nil // undeclared: the compiler refuses references
	}
	declared := map[string]*refs.Compiled{}
	for _, c := range spec.References {
		declared[c.Name] = c
	}
	var errs field.ErrorList
	for i, c := range spec.Conditions {
		if References(ReferencesVarName, c.Expression) {
			errs = append(errs, field.Invalid(fieldOf(path, "conditions", i), c.Expression, "match conditions cannot read references: read them in variables or expressions"))
		}
	}
	check := func(p *field.Path, text string) {
		if text == "" || !References(ReferencesVarName, text) {
			return
		}
		for _, msg := range referenceProblems(text, declared) {
			errs = append(errs, field.Invalid(p, text, msg))
		}
	}
	for i, v := range spec.Variables {
		check(path.Child("variables").Index(i).Child("expression"), v.Expression)
	}
	for i, v := range spec.Validations {
		check(path.Child("expressions").Index(i).Child("expression"), v.Expression)
		check(path.Child("expressions").Index(i).Child("messageExpression"), v.MessageExpression)
	}
	return errs
}

// referenceProblems are what an expression reads of references that its
// declarations cannot answer.
func referenceProblems(text string, declared map[string]*refs.Compiled) []string {
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
	if err != nil {
		return []string{err.Error()}
	}
	ast, iss := env.Parse(text)
	if iss.Err() != nil {
		return nil // the compiler reports it
	}
	names := declaredNames(declared)
	var out []string
	idents, selects := 0, 0
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.IdentKind:
			if e.AsIdent() == ReferencesVarName {
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
	if op := s.Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == ReferencesVarName {
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
