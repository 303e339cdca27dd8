package cel

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
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
		if analysis.Uses(refs.Variable, c.Expression) {
			errs = append(errs, field.Invalid(fieldOf(path, "conditions", i), c.Expression, "match conditions cannot read references: read them in variables or expressions"))
		}
	}
	check := func(p *field.Path, text string) {
		if text == "" || !analysis.Uses(refs.Variable, text) {
			return
		}
		for _, msg := range analysis.ReferenceProblems(text, declared) {
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
