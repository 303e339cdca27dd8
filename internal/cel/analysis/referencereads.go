package analysis

// What a policy's CEL reads of the objects it references, found from its
// expressions before they run, so that tollgate holds only that of each
// object (references.Read). The analysis follows the referenced objects
// as values through the expressions: from references.<name> and its
// lookups, through variables, comprehensions (the macros), list literals,
// concatenation and conditionals, to where a field is selected, indexed,
// tested with has(), iterated, or its value used. Anything it does not
// follow (an object used as a whole value, a reference handed to a
// function it does not know) keeps that reference's objects whole: the
// analysis may keep more than a policy reads, never less.

import (
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"

	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// shape is what a value that comes from referenced objects is.
type shape int

const (
	shapeHandle  shape = iota // references.<name>
	shapeObjects              // a list of referenced objects
	shapeObject               // one referenced object
	shapeField                // a field's value (a list's elements alike)
)

// origin is a value of referenced objects: of which reference, its shape,
// and for a field its path from the object's root and whether it is an
// element of the list there (elem) rather than the value itself.
type origin struct {
	ref   string
	shape shape
	path  string // joined by pathSep, for comparing
	elem  bool
}

// pathSep joins a path's names: no field name holds it.
const pathSep = "\x00"

type origins map[origin]bool

func (o origins) add(x origins) origins {
	if len(x) == 0 {
		return o
	}
	if o == nil {
		o = origins{}
	}
	for k := range x {
		o[k] = true
	}
	return o
}

// readAnalysis is the reads found so far, by reference name.
type readAnalysis struct {
	reads map[string]*refs.Read
}

func (a *readAnalysis) read(ref string) *refs.Read {
	r := a.reads[ref]
	if r == nil {
		r = &refs.Read{}
		a.reads[ref] = r
	}
	return r
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == pathSep[0] {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + pathSep + name
}

// use records that the values of os are read whole: a field's path kept
// whole; an object, a list of objects or a handle used as a value keeps
// the reference's objects whole.
func (a *readAnalysis) use(os origins) {
	for o := range os {
		r := a.read(o.ref)
		if o.shape == shapeField {
			r.Values = append(r.Values, splitPath(o.path))
		} else {
			r.Whole = true
		}
	}
}

// Variable is a policy's variable: variables.<Name> is its value.
type Variable struct {
	Name       string
	Expression string
}

// ReferenceReads is what the expressions, through the variables, read of
// each declared reference's objects, by name. The references' own index
// keys count too. An expression that does not parse keeps every
// reference's objects whole (the compiler refuses it anyway).
func ReferenceReads(declared []*refs.Compiled, variables []Variable, expressions ...string) map[string]refs.Read {
	a := &readAnalysis{reads: map[string]*refs.Read{}}
	unread := false
	read := func(text string, scope map[string]origins) origins {
		if text == "" {
			return nil
		}
		e, _, ok := parse(text)
		if !ok {
			unread = true
			return nil
		}
		return a.eval(e, scope)
	}
	for _, c := range declared {
		for _, key := range c.IndexKeys() {
			a.use(read(key, map[string]origins{"object": {{ref: c.Name, shape: shapeObject}: true}}))
		}
	}
	vars := map[string]origins{}
	for _, v := range variables {
		vars["variables."+v.Name] = read(v.Expression, vars)
	}
	for _, text := range expressions {
		a.use(read(text, vars))
	}
	out := map[string]refs.Read{}
	for _, c := range declared {
		switch r := a.reads[c.Name]; {
		case unread:
			out[c.Name] = refs.Read{Whole: true}
		case r != nil:
			out[c.Name] = *r
		default:
			out[c.Name] = refs.Read{}
		}
	}
	return out
}

// eval is what an expression's value may come from, recording what it
// reads on the way. scope maps identifiers (comprehension variables,
// "variables.<name>", and in an index key "object") to their origins.
func (a *readAnalysis) eval(e celast.Expr, scope map[string]origins) origins {
	switch e.Kind() {
	case celast.IdentKind:
		return scope[e.AsIdent()]
	case celast.SelectKind:
		s := e.AsSelect()
		op := s.Operand()
		if op.Kind() == celast.IdentKind {
			switch op.AsIdent() {
			case refs.Variable:
				return origins{{ref: s.FieldName(), shape: shapeHandle}: true}
			case "variables":
				if _, shadowed := scope["variables"]; !shadowed {
					return scope["variables."+s.FieldName()]
				}
			}
		}
		return a.selectField(a.eval(op, scope), s.FieldName(), s.IsTestOnly())
	case celast.CallKind:
		return a.call(e.AsCall(), scope)
	case celast.ListKind:
		var out origins
		for _, el := range e.AsList().Elements() {
			for o := range a.eval(el, scope) {
				switch o.shape {
				case shapeObject:
					out = out.add(origins{{ref: o.ref, shape: shapeObjects}: true})
				case shapeField:
					if o.elem { // a list of the elements of the list at path: a part of it
						o.elem = false
						out = out.add(origins{o: true})
					} else { // a list holding the value at path, which this does not follow
						a.use(origins{o: true})
					}
				default: // a list of lists of objects, or of handles
					a.use(origins{o: true})
				}
			}
		}
		return out
	case celast.MapKind:
		for _, entry := range e.AsMap().Entries() {
			m := entry.AsMapEntry()
			a.use(a.eval(m.Key(), scope))
			a.use(a.eval(m.Value(), scope))
		}
		return nil
	case celast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			a.use(a.eval(f.AsStructField().Value(), scope))
		}
		return nil
	case celast.ComprehensionKind:
		return a.comprehension(e.AsComprehension(), scope)
	}
	return nil
}

// selectField is what selecting name of os gives; a test (has()) keeps
// the field's presence.
func (a *readAnalysis) selectField(os origins, name string, test bool) origins {
	var out origins
	for o := range os {
		switch o.shape {
		case shapeObject, shapeField:
			p := join(o.path, name)
			if test {
				r := a.read(o.ref)
				r.Present = append(r.Present, splitPath(p))
				continue
			}
			out = out.add(origins{{ref: o.ref, shape: shapeField, path: p}: true})
		default:
			a.use(origins{o: true})
		}
	}
	return out
}

// lookups are the functions of references.<name>, and what they give.
var lookups = map[string]shape{"byKey": shapeObjects, "inNamespace": shapeObjects, "objects": shapeObjects, "get": shapeObject}

func (a *readAnalysis) call(c celast.CallExpr, scope map[string]origins) origins {
	args := c.Args()
	if c.IsMemberFunction() {
		target := a.eval(c.Target(), scope)
		if shape, ok := lookups[c.FunctionName()]; ok && onlyHandles(target) {
			for _, arg := range args {
				a.use(a.eval(arg, scope))
			}
			out := origins{}
			for o := range target {
				out[origin{ref: o.ref, shape: shape}] = true
			}
			return out
		}
		if c.FunctionName() == "size" && len(args) == 0 {
			a.sized(target)
			return nil
		}
		a.use(target)
		for _, arg := range args {
			a.use(a.eval(arg, scope))
		}
		return nil
	}
	switch c.FunctionName() {
	case "size":
		if len(args) == 1 {
			a.sized(a.eval(args[0], scope))
			return nil
		}
	case "_?_:_":
		a.use(a.eval(args[0], scope))
		return a.eval(args[1], scope).add(a.eval(args[2], scope))
	case "_+_":
		return a.eval(args[0], scope).add(a.eval(args[1], scope))
	case "_==_", "_!=_":
		if isNull(args[0]) || isNull(args[1]) {
			for _, arg := range args {
				a.present(a.eval(arg, scope))
			}
			return nil
		}
	case "_[_]", "_[?_]", "_?._":
		target := a.eval(args[0], scope)
		if key, ok := StringLiteral(args[1]); ok {
			return a.selectField(target, key, false)
		}
		if isIntLiteral(args[1]) { // an element of a list: its path is the list's
			var out origins
			for o := range target {
				switch o.shape {
				case shapeObjects:
					out = out.add(origins{{ref: o.ref, shape: shapeObject}: true})
				case shapeField:
					o.elem = true
					out = out.add(origins{o: true})
				default:
					a.use(origins{o: true})
				}
			}
			return out
		}
		a.use(a.eval(args[1], scope))
		var out origins
		for o := range target {
			switch o.shape {
			case shapeObjects:
				out = out.add(origins{{ref: o.ref, shape: shapeObject}: true})
			case shapeField: // an element of a list, or a map's value by a key not known
				a.use(origins{o: true})
				out = out.add(origins{o: true})
			default:
				a.use(origins{o: true})
			}
		}
		return out
	}
	for _, arg := range args {
		a.use(a.eval(arg, scope))
	}
	return nil
}

// sized records size() of os: a list of objects' size reads no object.
func (a *readAnalysis) sized(os origins) {
	for o := range os {
		if o.shape != shapeObjects {
			a.use(origins{o: true})
		}
	}
}

// present records a comparison with null: whether the value is there.
func (a *readAnalysis) present(os origins) {
	for o := range os {
		switch o.shape {
		case shapeField:
			r := a.read(o.ref)
			r.Present = append(r.Present, splitPath(o.path))
		case shapeObject:
		default:
			a.use(origins{o: true})
		}
	}
}

func (a *readAnalysis) comprehension(c celast.ComprehensionExpr, scope map[string]origins) origins {
	inner := make(map[string]origins, len(scope)+3)
	for k, v := range scope {
		inner[k] = v
	}
	var elem origins
	for o := range a.eval(c.IterRange(), scope) {
		switch o.shape {
		case shapeObjects:
			elem = elem.add(origins{{ref: o.ref, shape: shapeObject}: true})
		case shapeField:
			r := a.read(o.ref)
			if o.elem {
				r.IteratedElements = append(r.IteratedElements, splitPath(o.path))
			} else {
				r.Iterated = append(r.Iterated, splitPath(o.path))
			}
			o.elem = true
			elem = elem.add(origins{o: true})
		default: // an object's own keys, or a handle
			a.use(origins{o: true})
		}
	}
	inner[c.IterVar()] = elem
	if c.HasIterVar2() {
		inner[c.IterVar2()] = elem
	}
	// The accumulator holds what its initial value and each step give:
	// followed until nothing new is found.
	accu := a.eval(c.AccuInit(), scope)
	for {
		inner[c.AccuVar()] = accu
		next := origins{}.add(accu).add(a.eval(c.LoopStep(), inner))
		a.eval(c.LoopCondition(), inner)
		if len(next) == len(accu) {
			break
		}
		accu = next
	}
	inner[c.AccuVar()] = accu
	return a.eval(c.Result(), inner)
}

func onlyHandles(os origins) bool {
	if len(os) == 0 {
		return false
	}
	for o := range os {
		if o.shape != shapeHandle {
			return false
		}
	}
	return true
}

func isIntLiteral(e celast.Expr) bool {
	if e.Kind() != celast.LiteralKind {
		return false
	}
	switch e.AsLiteral().(type) {
	case types.Int, types.Uint:
		return true
	}
	return false
}
