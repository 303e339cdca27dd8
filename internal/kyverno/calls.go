package kyverno

// The calls of Kyverno's resource library a Kyverno policy makes, found
// when it loads (resource.go evaluates them).

import (
	"fmt"
	"slices"

	celast "github.com/google/cel-go/common/ast"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
)

// Call is one call of Kyverno's resource library a policy makes:
// the apiVersion and resource it reads, string literals.
type Call struct {
	APIVersion, Resource string
}

// ResourceCalls finds the calls of Kyverno's resource library in an
// expression, and what tollgate cannot honour of them, each a sentence: a
// function other than Get, List (get, list), a call of another arity than
// the policy's kind has (namespaced: a NamespacedValidatingPolicy, whose
// calls name no namespace), an apiVersion or resource that is not a
// string literal (tollgate lists and watches the kinds a policy reads from
// when it loads), or resource read other than as a call's receiver.
func ResourceCalls(expression string, namespaced bool) (calls []Call, problems []string) {
	if expression == "" || !analysis.Uses(resourceVar, expression) {
		return nil, nil
	}
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
	if err != nil {
		return nil, []string{err.Error()}
	}
	ast, iss := env.Parse(expression)
	if iss.Err() != nil {
		return nil, nil // the compiler reports it
	}
	idents, receivers := 0, 0
	visitFree(ast.NativeRep().Expr(), resourceVar, func(e celast.Expr) {
		switch e.Kind() {
		case celast.IdentKind:
			if e.AsIdent() == resourceVar {
				idents++
			}
		case celast.CallKind:
			call := e.AsCall()
			if !call.IsMemberFunction() || call.Target().Kind() != celast.IdentKind || call.Target().AsIdent() != resourceVar {
				return
			}
			receivers++
			fn := call.FunctionName()
			arity, known := arity(fn, namespaced)
			switch {
			case !known && (fn == "Post" || fn == "post"):
				problems = append(problems, fmt.Sprintf("calls resource.%s, which creates objects: tollgate never writes to the cluster", fn))
				return
			case !known:
				problems = append(problems, fmt.Sprintf("calls resource.%s, of Kyverno's CEL libraries, which tollgate does not have (it has resource.Get and resource.List)", fn))
				return
			case !slices.Contains(arity, len(call.Args())):
				problems = append(problems, fmt.Sprintf("resource.%s with %d arguments: tollgate reads %s", fn, len(call.Args()), forms(fn, namespaced)))
				return
			}
			apiVersion, ok1 := analysis.StringLiteral(call.Args()[0])
			resource, ok2 := analysis.StringLiteral(call.Args()[1])
			if !ok1 || !ok2 {
				problems = append(problems, fmt.Sprintf("resource.%s: its apiVersion and resource must be string literals, so that tollgate knows when the policy loads which kind to list and watch", fn))
				return
			}
			c := Call{APIVersion: apiVersion, Resource: resource}
			if !slices.Contains(calls, c) {
				calls = append(calls, c)
			}
		}
	})
	if idents > receivers {
		problems = append(problems, "resource is read only as the receiver of resource.Get or resource.List")
	}
	return calls, problems
}

// visitFree calls f with each expression of e, in pre-order, but those in
// the scope of a comprehension variable named name (a rule's
// rules.exists(resource, ...) reads its own resource, not the library).
func visitFree(e celast.Expr, name string, f func(celast.Expr)) {
	f(e)
	switch e.Kind() {
	case celast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() {
			visitFree(c.Target(), name, f)
		}
		for _, a := range c.Args() {
			visitFree(a, name, f)
		}
	case celast.SelectKind:
		visitFree(e.AsSelect().Operand(), name, f)
	case celast.ListKind:
		for _, el := range e.AsList().Elements() {
			visitFree(el, name, f)
		}
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			visitFree(en.AsMapEntry().Key(), name, f)
			visitFree(en.AsMapEntry().Value(), name, f)
		}
	case celast.StructKind:
		for _, fl := range e.AsStruct().Fields() {
			visitFree(fl.AsStructField().Value(), name, f)
		}
	case celast.ComprehensionKind:
		c := e.AsComprehension()
		visitFree(c.IterRange(), name, f)
		visitFree(c.AccuInit(), name, f)
		if c.IterVar() == name || c.IterVar2() == name || c.AccuVar() == name {
			return
		}
		visitFree(c.LoopCondition(), name, f)
		visitFree(c.LoopStep(), name, f)
		visitFree(c.Result(), name, f)
	}
}

// arity is how many arguments Kyverno's resource library takes in
// each function tollgate has (the forms naming a GroupVersionResource need
// ToGVR, which it has not): a ValidatingPolicy's name a namespace, a
// NamespacedValidatingPolicy's read its own.
func arity(fn string, namespaced bool) ([]int, bool) {
	switch fn {
	case "Get", "get":
		if namespaced {
			return []int{3}, true
		}
		return []int{4}, true
	case "List", "list":
		if namespaced {
			return []int{2, 3}, true
		}
		return []int{3, 4}, true
	}
	return nil, false
}

func forms(fn string, namespaced bool) string {
	switch {
	case (fn == "Get" || fn == "get") && namespaced:
		return fn + "(apiVersion, resource, name) in a NamespacedValidatingPolicy"
	case fn == "Get" || fn == "get":
		return fn + "(apiVersion, resource, namespace, name)"
	case namespaced:
		return fn + "(apiVersion, resource[, labels]) in a NamespacedValidatingPolicy"
	}
	return fn + "(apiVersion, resource, namespace[, labels])"
}
