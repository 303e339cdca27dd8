package analysis

import (
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
)

// MayRead tells whether any of the expressions may read the field at path
// of object or oldObject (request.object and request.oldObject alike),
// e.g. ["metadata", "managedFields"], or one key of a map field, e.g.
// ["metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"].
// It is false only when every use of object and oldObject is a field
// selection or literal-key index that leaves the path before its end, a
// presence test of a field above it (has(object.metadata.annotations)), or
// a literal key tested with in that is another key of the same map: then
// removing that one field (and nothing above it) cannot change any result.
// Any other use (the object, its metadata or the map whole: passed to a
// function, iterated, compared, sized) counts as a read, and so does an
// expression that does not parse.
func MayRead(path []string, expressions ...string) bool {
	for _, text := range expressions {
		if text == "" {
			continue
		}
		e, _, ok := parse(text)
		if !ok || mayRead(path, e) {
			return true
		}
	}
	return false
}

func mayRead(path []string, e celast.Expr) bool {
	if fields, testOnly, ok := objectChain(e); ok {
		return chainReads(path, fields, testOnly)
	}
	if e.Kind() == celast.CallKind {
		c := e.AsCall()
		switch {
		// 'key' in object.metadata.annotations: a presence test of a key.
		case c.FunctionName() == "@in" && len(c.Args()) == 2:
			if key, ok := StringLiteral(c.Args()[0]); ok {
				if fields, _, ok := objectChain(c.Args()[1]); ok {
					return chainReads(path, append(fields, key), true)
				}
			}
		// oldObject == null: whether there is one, not what it holds.
		case (c.FunctionName() == "_==_" || c.FunctionName() == "_!=_") && len(c.Args()) == 2:
			for i, arg := range c.Args() {
				if isNull(arg) {
					if fields, _, ok := objectChain(c.Args()[1-i]); ok {
						return chainReads(path, fields, true)
					}
				}
			}
		}
	}
	for _, child := range children(e) {
		if mayRead(path, child) {
			return true
		}
	}
	return false
}

// chainReads: a chain of fields selected from the object may read path.
func chainReads(path, fields []string, testOnly bool) bool {
	for i := 0; i < len(fields) && i < len(path); i++ {
		if fields[i] != path[i] {
			return false // leaves the path
		}
	}
	if len(fields) >= len(path) {
		return true
	}
	// A field above the path, whole: only its presence is safe.
	return !testOnly
}

// objectChain is e as the fields (and literal keys) it selects from
// object, oldObject, request.object or request.oldObject; testOnly when it
// is a has() test of its last field.
func objectChain(e celast.Expr) (fields []string, testOnly, ok bool) {
	var rev []string
	first := true
	for {
		switch e.Kind() {
		case celast.IdentKind:
			name := e.AsIdent()
			if name != "object" && name != "oldObject" {
				if name == "request" && len(rev) > 0 && (rev[len(rev)-1] == "object" || rev[len(rev)-1] == "oldObject") {
					rev = rev[:len(rev)-1]
				} else {
					return nil, false, false
				}
			}
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			return rev, testOnly, true
		case celast.SelectKind:
			s := e.AsSelect()
			if first {
				testOnly = s.IsTestOnly()
			} else if s.IsTestOnly() {
				return nil, false, false
			}
			rev = append(rev, s.FieldName())
			e = s.Operand()
		case celast.CallKind:
			c := e.AsCall()
			switch c.FunctionName() {
			case "_[_]", "_[?_]", "_?._":
			default:
				return nil, false, false
			}
			if len(c.Args()) != 2 {
				return nil, false, false
			}
			key, isString := StringLiteral(c.Args()[1])
			if !isString {
				return nil, false, false
			}
			rev = append(rev, key)
			e = c.Args()[0]
		default:
			return nil, false, false
		}
		first = false
	}
}

// StringLiteral is the value of e when e is a string literal.
func StringLiteral(e celast.Expr) (string, bool) {
	if e.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

func isNull(e celast.Expr) bool {
	if e.Kind() != celast.LiteralKind {
		return false
	}
	_, ok := e.AsLiteral().(types.Null)
	return ok
}

// children are the sub-expressions of e.
func children(e celast.Expr) []celast.Expr {
	switch e.Kind() {
	case celast.CallKind:
		c := e.AsCall()
		out := append([]celast.Expr{}, c.Args()...)
		if c.IsMemberFunction() {
			out = append(out, c.Target())
		}
		return out
	case celast.SelectKind:
		return []celast.Expr{e.AsSelect().Operand()}
	case celast.ComprehensionKind:
		c := e.AsComprehension()
		return []celast.Expr{c.IterRange(), c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()}
	case celast.ListKind:
		return e.AsList().Elements()
	case celast.MapKind:
		var out []celast.Expr
		for _, en := range e.AsMap().Entries() {
			m := en.AsMapEntry()
			out = append(out, m.Key(), m.Value())
		}
		return out
	case celast.StructKind:
		var out []celast.Expr
		for _, f := range e.AsStruct().Fields() {
			out = append(out, f.AsStructField().Value())
		}
		return out
	}
	return nil
}
