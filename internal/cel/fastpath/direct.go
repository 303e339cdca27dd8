package fastpath

import (
	"slices"
	"strings"
	"unique"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
)

// The direct evaluator: a checked expression of the fast path compiled
// into Go closures that read the review's JSON (the documents' spans)
// without making CEL values, for a subset of CEL whose semantics are
// plain: field selection, has() and optional selection (.?, orValue) on
// objects; object, oldObject, the policy's variables and the request's
// namespace, name, operation and subResource; literals, list
// literals and the empty map; !, &&, ||, ?:; == and != between scalars of
// one kind (null, bool, int, string); in over lists and objects' keys; <,
// <=, >, >= between ints; + of ints, strings and lists; size();
// startsWith, endsWith, contains, and the strings extension's indexOf,
// lastIndexOf, substring (one argument) and join; [] on lists and
// objects; and the comprehensions the macros make (all, exists,
// exists_one, filter, map) over lists, and over maps where the order of
// their keys cannot change the result.
//
// Each evaluation either gives the value cel-go gives, or gives up (ok
// false) wherever cel-go's answer would involve anything else: an error
// (no such key, no such overload, overflow), a kind it does not model (a
// double, a non-empty map made by the expression), heterogeneous
// equality, a list of two or more made in a map's iteration order (Go's,
// random). Giving up sends the policy to cel-go (the untracked programs,
// then the tracked path). Where the bound proves
// that no cost limit can be reached, its values decide the policy as the
// validator would (directpath.go): TestDirectAsCEL compares its every
// value with cel-go's, and TestEvaluateAsReference its decisions with the
// validator's.

// dframe is one evaluation: the documents, the policy's variables as far
// as evaluated, and the comprehensions' variables: each plan numbers its
// own from 0, and a variable's plan, evaluated on first read wherever
// that is, reads and writes them maxSlots above the plan that read it.
type dframe struct {
	r      *Review  // its docs (object, oldObject; nil for none) and the request's fields
	plans  []*dplan // the variables'
	vars   [maxVars]dvar
	shared map[string]dval // independent variables' values of this review, by expression
	base   int
	slots  [frameSlots]dval
}

// dvar is a variable's state in a frame.
type dvar struct {
	state uint8 // 0 not evaluated, 1 value, 2 gave up
	val   dval
}

const (
	// maxSlots is how many comprehension variables a plan may have in
	// scope at once, frameSlots how many a frame has for the nested
	// evaluations of variables, maxVars how many variables a policy may
	// have for the direct evaluator.
	maxSlots   = 8
	frameSlots = 4 * maxSlots
	maxVars    = 16
)

// dexpr evaluates an expression in a frame.
type dexpr func(f *dframe) (dval, bool)

// dplan is a compiled expression; for a variable, independent tells
// whether its value may be shared by every policy on the review (by its
// expression).
type dplan struct {
	eval        dexpr
	text        string
	independent bool
}

// dcompiler compiles the expressions of one program: vars are the
// program's variables' indexes by name, plans their plans (nil where
// none), scope the comprehension variables in scope, by slot.
type dcompiler struct {
	vars  map[string]int
	plans []*dplan
	scope []string
}

// directPlans compiles the program's variables and each list of
// expressions in exprs (its rules, its message expressions) for the
// direct evaluator: nil where one cannot be (an expression reading a
// variable that cannot be cannot be either).
func directPlans(vars []Var, exprs ...[]*Untracked) (varPlans []*dplan, plans [][]dexpr) {
	if len(vars) > maxVars { // more than a frame holds: no plan reads them
		for _, us := range exprs {
			plans = append(plans, make([]dexpr, len(us)))
		}
		return nil, plans
	}
	c := &dcompiler{vars: map[string]int{}, plans: make([]*dplan, len(vars))}
	for i, v := range vars {
		c.vars[v.Name] = i
	}
	for i, v := range vars {
		if v.Prog == nil {
			continue
		}
		if e, ok := c.compile(v.Prog.ast.Expr()); ok {
			c.plans[i] = &dplan{eval: e, text: v.Text, independent: v.Independent}
		}
	}
	for _, us := range exprs {
		ps := make([]dexpr, len(us))
		for i, u := range us {
			if u != nil {
				ps[i], _ = c.compile(u.ast.Expr())
			}
		}
		plans = append(plans, ps)
	}
	return c.plans, plans
}

func (c *dcompiler) compile(e celast.Expr) (dexpr, bool) {
	switch e.Kind() {
	case celast.LiteralKind:
		return literal(e.AsLiteral())
	case celast.IdentKind:
		return c.ident(e.AsIdent())
	case celast.SelectKind:
		return c.selection(e.AsSelect())
	case celast.ListKind:
		return c.list(e.AsList())
	case celast.MapKind:
		if e.AsMap().Size() > 0 {
			return nil, false
		}
		return func(*dframe) (dval, bool) { return dval{k: dObject}, true }, true // {}: no document, no members
	case celast.CallKind:
		return c.call(e.AsCall())
	case celast.ComprehensionKind:
		return c.comprehension(e.AsComprehension())
	}
	return nil, false
}

func literal(v any) (dexpr, bool) {
	var d dval
	switch x := v.(type) {
	case types.Bool:
		d = dBoolOf(bool(x))
	case types.Int:
		d = dval{k: dInt, i: int64(x)}
	case types.String:
		d = dval{k: dString, s: string(x)}
	case types.Null:
		d = dval{k: dNull}
	default:
		return nil, false
	}
	return func(*dframe) (dval, bool) { return d, true }, true
}

func (c *dcompiler) ident(name string) (dexpr, bool) {
	for i := len(c.scope) - 1; i >= 0; i-- {
		if c.scope[i] == name {
			return func(f *dframe) (dval, bool) { return f.slots[f.base+i], true }, true
		}
	}
	var doc int
	switch name {
	case plugincel.ObjectVarName:
		doc = 0
	case plugincel.OldObjectVarName:
		doc = 1
	default:
		return nil, false
	}
	return func(f *dframe) (dval, bool) {
		d := f.r.Docs[doc]
		if d == nil {
			return dval{k: dNull}, true
		}
		return rootValue(d), true
	}, true
}

func (c *dcompiler) shadowed(name string) bool {
	for _, s := range c.scope {
		if s == name {
			return true
		}
	}
	return false
}

func (c *dcompiler) selection(s celast.SelectExpr) (dexpr, bool) {
	op := s.Operand()
	if c.isVariable(s) {
		if s.IsTestOnly() {
			return nil, false
		}
		i, ok := c.vars[s.FieldName()]
		if !ok || c.plans[i] == nil {
			return nil, false
		}
		return func(f *dframe) (dval, bool) { return f.variable(i) }, true
	}
	// A chain of selections (object.spec.securityContext) is one closure
	// walking the names.
	names := []string{s.FieldName()}
	for op.Kind() == celast.SelectKind && !op.AsSelect().IsTestOnly() && !c.isVariable(op.AsSelect()) {
		names = append(names, op.AsSelect().FieldName())
		op = op.AsSelect().Operand()
	}
	slices.Reverse(names)
	if op.Kind() == celast.IdentKind && op.AsIdent() == plugincel.RequestVarName && !c.shadowed(op.AsIdent()) {
		return requestField(names, s.IsTestOnly())
	}
	walked, last := names, ""
	if s.IsTestOnly() {
		walked, last = names[:len(names)-1], names[len(names)-1]
	}
	var from dexpr
	if doc, ok := c.root(op); ok && len(walked) > 0 {
		// From object or oldObject: the value is the document's, read
		// once for every policy of the review.
		key := unique.Make(strings.Join(walked, "\x00"))
		from = func(f *dframe) (dval, bool) {
			if f.r.Docs[doc] == nil {
				return dval{}, false // null has no members
			}
			return f.r.path(doc, key, walked)
		}
	} else {
		operand, ok := c.compile(op)
		if !ok {
			return nil, false
		}
		from = func(f *dframe) (dval, bool) {
			v, ok := operand(f)
			return walk(v, ok, walked)
		}
	}
	if !s.IsTestOnly() {
		return from, true
	}
	return func(f *dframe) (dval, bool) {
		v, ok := from(f) // no such key on the way: cel-go's error
		if !ok || v.k != dObject || v.opt {
			return dval{}, false
		}
		return dBoolOf(v.hasField(last)), true
	}, true
}

// requestField is request.name for the request's string fields that the
// Review carries: namespace, name, operation and subResource. The
// apiserver's request value (CreateAdmissionRequest, read through
// common.SchemalessTypedToVal) leaves out a field its JSON name marks
// omitempty when it is empty: there selecting it is cel-go's "no such
// key", and the evaluation gives up. Anything else of request (has(),
// kind, userInfo, dryRun, deeper selections) has no plan.
func requestField(names []string, testOnly bool) (dexpr, bool) {
	if testOnly || len(names) != 1 {
		return nil, false
	}
	var read func(r *Review) string
	omitEmpty := true
	switch names[0] {
	case "namespace":
		read = func(r *Review) string { return r.Namespace }
	case "name":
		read = func(r *Review) string { return r.Name }
	case "subResource":
		read = func(r *Review) string { return r.SubResource }
	case "operation":
		read, omitEmpty = func(r *Review) string { return r.Operation }, false
	default:
		return nil, false
	}
	return func(f *dframe) (dval, bool) {
		s := read(f.r)
		if s == "" && omitEmpty {
			return dval{}, false
		}
		return dval{k: dString, s: s}, true
	}, true
}

// root tells whether e is object or oldObject (not a comprehension's
// variable of that name), and which document it is.
func (c *dcompiler) root(e celast.Expr) (doc int, ok bool) {
	if e.Kind() != celast.IdentKind || c.shadowed(e.AsIdent()) {
		return 0, false
	}
	switch e.AsIdent() {
	case plugincel.ObjectVarName:
		return 0, true
	case plugincel.OldObjectVarName:
		return 1, true
	}
	return 0, false
}

// walk selects names in turn from v (ok: v is a value); not ok where one
// is no object's member (cel-go's error) or is selected from anything
// else.
func walk(v dval, ok bool, names []string) (dval, bool) {
	for _, n := range names {
		if !ok || v.k != dObject || v.opt {
			return dval{}, false
		}
		v, ok = v.field(n)
	}
	return v, ok
}

// isVariable tells whether s reads a variable (variables.name).
func (c *dcompiler) isVariable(s celast.SelectExpr) bool {
	op := s.Operand()
	return op.Kind() == celast.IdentKind && op.AsIdent() == plugincel.VariableVarName && !c.shadowed(plugincel.VariableVarName)
}

// variable is the value of the frame's variable i, evaluated on first
// read; an independent one shared by every policy of the review.
func (f *dframe) variable(i int) (dval, bool) {
	v := &f.vars[i]
	switch v.state {
	case 1:
		return v.val, true
	case 2:
		return dval{}, false
	}
	p := f.plans[i]
	val, ok := dval{}, false
	if s, found := f.shared[p.text]; found && p.independent {
		val, ok = s, true
	} else if f.base+2*maxSlots <= frameSlots {
		f.base += maxSlots
		val, ok = p.eval(f)
		f.base -= maxSlots
		if ok && p.independent {
			f.shared[p.text] = val
		}
	}
	if !ok {
		v.state = 2
		return dval{}, false
	}
	v.state, v.val = 1, val
	return val, true
}

func (c *dcompiler) list(l celast.ListExpr) (dexpr, bool) {
	if len(l.OptionalIndices()) > 0 {
		return nil, false
	}
	elems, ok := c.all(l.Elements())
	if !ok {
		return nil, false
	}
	return func(f *dframe) (dval, bool) {
		out := make([]dval, len(elems))
		for i, e := range elems {
			v, ok := e(f)
			if !ok {
				return dval{}, false
			}
			out[i] = v
		}
		return dval{k: dList, list: out}, true
	}, true
}

func (c *dcompiler) all(es []celast.Expr) ([]dexpr, bool) {
	out := make([]dexpr, len(es))
	for i, e := range es {
		x, ok := c.compile(e)
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}
