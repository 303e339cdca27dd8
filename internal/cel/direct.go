package cel

import (
	"slices"
	"strings"
	"unique"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/overloads"
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
	in     *Input   // its docs (object, oldObject; nil for none) and the request's fields
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
func directPlans(vars []*variable, exprs ...[]*untracked) (varPlans []*dplan, plans [][]dexpr) {
	if len(vars) > maxVars { // more than a frame holds: no plan reads them
		for _, us := range exprs {
			plans = append(plans, make([]dexpr, len(us)))
		}
		return nil, plans
	}
	c := &dcompiler{vars: map[string]int{}, plans: make([]*dplan, len(vars))}
	for i, v := range vars {
		c.vars[v.name] = i
	}
	for i, v := range vars {
		if v.untracked == nil {
			continue
		}
		if e, ok := c.compile(v.untracked.ast.Expr()); ok {
			c.plans[i] = &dplan{eval: e, text: v.result.ExpressionAccessor.GetExpression(), independent: v.independent}
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
		d := f.in.docs[doc]
		if d == nil {
			return dval{k: dNull}, true
		}
		return d.rootValue(), true
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
			d := f.in.docs[doc]
			if d == nil {
				return dval{}, false // null has no members
			}
			return d.path(key, walked)
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
// Input carries: namespace, name, operation and subResource. The
// apiserver's request value (CreateAdmissionRequest, read through
// common.SchemalessTypedToVal) leaves out a field its JSON name marks
// omitempty when it is empty: there selecting it is cel-go's "no such
// key", and the evaluation gives up. Anything else of request (has(),
// kind, userInfo, dryRun, deeper selections) has no plan.
func requestField(names []string, testOnly bool) (dexpr, bool) {
	if testOnly || len(names) != 1 {
		return nil, false
	}
	var read func(in *Input) string
	omitEmpty := true
	switch names[0] {
	case "namespace":
		read = func(in *Input) string { return in.Namespace }
	case "name":
		read = func(in *Input) string { return in.Name }
	case "subResource":
		read = func(in *Input) string { return in.SubResource }
	case "operation":
		read, omitEmpty = func(in *Input) string { return in.Operation }, false
	default:
		return nil, false
	}
	return func(f *dframe) (dval, bool) {
		s := read(f.in)
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

func (c *dcompiler) call(call celast.CallExpr) (dexpr, bool) {
	args := call.Args()
	if call.IsMemberFunction() {
		args = append([]celast.Expr{call.Target()}, args...)
	}
	if call.FunctionName() == operators.OptSelect {
		return c.optSelect(args)
	}
	xs, ok := c.all(args)
	if !ok {
		return nil, false
	}
	fn := call.FunctionName()
	member := call.IsMemberFunction()
	switch {
	case len(xs) == 1 && fn == operators.LogicalNot:
		return unary(xs[0], func(v dval) (dval, bool) { return dBoolOf(!v.b), v.k == dBool && !v.opt })
	case len(xs) == 1 && fn == operators.NotStrictlyFalse:
		return unary(xs[0], func(v dval) (dval, bool) { return v, v.k == dBool && !v.opt })
	case len(xs) == 1 && fn == overloads.Size:
		return unary(xs[0], func(v dval) (dval, bool) {
			n, ok := v.size()
			return dval{k: dInt, i: n}, ok && !v.opt
		})
	case len(xs) == 2 && fn == operators.LogicalAnd:
		return logical(xs[0], xs[1], false), true
	case len(xs) == 2 && fn == operators.LogicalOr:
		return logical(xs[0], xs[1], true), true
	case len(xs) == 3 && fn == operators.Conditional:
		cond, then, els := xs[0], xs[1], xs[2]
		return func(f *dframe) (dval, bool) {
			v, ok := cond(f)
			if !ok || v.k != dBool || v.opt {
				return dval{}, false
			}
			if v.b {
				return then(f)
			}
			return els(f)
		}, true
	case len(xs) == 2 && (fn == operators.Equals || fn == operators.NotEquals):
		neg := fn == operators.NotEquals
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			eq, ok := a.equal(b)
			return dBoolOf(eq != neg), ok
		})
	case len(xs) == 2 && fn == operators.In:
		return binary(xs[0], xs[1], in)
	case len(xs) == 2 && (fn == operators.Less || fn == operators.LessEquals || fn == operators.Greater || fn == operators.GreaterEquals):
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			if a.k != dInt || b.k != dInt || a.opt || b.opt {
				return dval{}, false
			}
			switch fn {
			case operators.Less:
				return dBoolOf(a.i < b.i), true
			case operators.LessEquals:
				return dBoolOf(a.i <= b.i), true
			case operators.Greater:
				return dBoolOf(a.i > b.i), true
			}
			return dBoolOf(a.i >= b.i), true
		})
	case len(xs) == 2 && fn == operators.Add:
		return binary(xs[0], xs[1], add)
	case len(xs) == 2 && fn == operators.Index:
		return binary(xs[0], xs[1], index)
	case len(xs) == 2 && member && (fn == overloads.StartsWith || fn == overloads.EndsWith || fn == overloads.Contains):
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			if a.k != dString || b.k != dString || a.opt || b.opt {
				return dval{}, false
			}
			switch fn {
			case overloads.StartsWith:
				return dBoolOf(strings.HasPrefix(a.s, b.s)), true
			case overloads.EndsWith:
				return dBoolOf(strings.HasSuffix(a.s, b.s)), true
			}
			return dBoolOf(strings.Contains(a.s, b.s)), true
		})
	case len(xs) == 2 && member && (fn == "indexOf" || fn == "lastIndexOf"):
		last := fn == "lastIndexOf"
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			if a.k != dString || b.k != dString || a.opt || b.opt {
				return dval{}, false // a list's indexOf, among others
			}
			return dval{k: dInt, i: runeIndex(a.s, b.s, last)}, true
		})
	case len(xs) == 2 && member && fn == "substring":
		return binary(xs[0], xs[1], directSubstring)
	case (len(xs) == 1 || len(xs) == 2) && member && fn == "join":
		sep := func(*dframe) (dval, bool) { return dval{k: dString}, true }
		if len(xs) == 2 {
			sep = xs[1]
		}
		return binary(xs[0], sep, joined)
	case len(xs) == 2 && member && fn == "orValue":
		return binary(xs[0], xs[1], func(a, b dval) (dval, bool) {
			switch {
			case a.k == dNone:
				return b, true
			case a.opt:
				a.opt = false
				return a, true
			}
			return dval{}, false
		})
	case len(xs) == 1 && member && fn == "hasValue":
		return unary(xs[0], func(v dval) (dval, bool) { return dBoolOf(v.k != dNone), v.opt || v.k == dNone })
	}
	return nil, false
}

// optSelect is x.?name: optional.none() when the object x has no member
// name, else optional.of its value; on an optional x, none stays none and
// a value is selected from.
func (c *dcompiler) optSelect(args []celast.Expr) (dexpr, bool) {
	if len(args) != 2 || args[1].Kind() != celast.LiteralKind {
		return nil, false
	}
	name, ok := args[1].AsLiteral().(types.String)
	if !ok {
		return nil, false
	}
	operand, ok := c.compile(args[0])
	if !ok {
		return nil, false
	}
	return func(f *dframe) (dval, bool) {
		v, ok := operand(f)
		if !ok || v.k == dNone {
			return v, ok
		}
		if v.k != dObject {
			return dval{}, false
		}
		m, has := v.field(string(name))
		if !has {
			return dval{k: dNone}, true
		}
		m.opt = true
		return m, true
	}, true
}

func unary(x dexpr, op func(dval) (dval, bool)) (dexpr, bool) {
	return func(f *dframe) (dval, bool) {
		v, ok := x(f)
		if !ok {
			return dval{}, false
		}
		return op(v)
	}, true
}

func binary(x, y dexpr, op func(a, b dval) (dval, bool)) (dexpr, bool) {
	return func(f *dframe) (dval, bool) {
		a, ok := x(f)
		if !ok {
			return dval{}, false
		}
		b, ok := y(f)
		if !ok {
			return dval{}, false
		}
		return op(a, b)
	}, true
}

// logical is && (or ||, when or): the left side decides alone when it is
// false (true); otherwise the right side, which must be a bool.
func logical(x, y dexpr, or bool) dexpr {
	return func(f *dframe) (dval, bool) {
		a, ok := x(f)
		if !ok || a.k != dBool || a.opt {
			return dval{}, false
		}
		if a.b == or {
			return a, true
		}
		b, ok := y(f)
		if !ok || b.k != dBool || b.opt {
			return dval{}, false
		}
		return b, true
	}
}

// in is a in b: a key of the object b, or an element of the list b equal
// to a (every element of a's kind).
func in(a, b dval) (dval, bool) {
	if a.opt || b.opt {
		return dval{}, false
	}
	if b.k == dObject {
		if a.k != dString {
			return dval{}, false
		}
		return dBoolOf(b.hasField(a.s)), true
	}
	found, ok := false, true
	if !b.each(func(e dval) bool {
		eq, same := a.equal(e)
		if !same {
			ok = false
			return false
		}
		found = found || eq
		return true
	}) {
		return dval{}, false
	}
	return dBoolOf(found), ok
}

// add is a + b for ints (no overflow), strings and lists.
func add(a, b dval) (dval, bool) {
	if a.opt || b.opt {
		return dval{}, false
	}
	switch {
	case a.k == dInt && b.k == dInt:
		s := a.i + b.i
		if (s > a.i) != (b.i > 0) {
			return dval{}, false // overflow: cel-go's error
		}
		return dval{k: dInt, i: s}, true
	case a.k == dString && b.k == dString:
		return dval{k: dString, s: a.s + b.s}, true
	}
	x, ok := a.elements()
	if !ok {
		return dval{}, false
	}
	y, ok := b.elements()
	if !ok {
		return dval{}, false
	}
	out := make([]dval, 0, len(x)+len(y))
	return dval{k: dList, list: append(append(out, x...), y...)}, true
}

// index is a[b]: the element of the list a at the int b, or the member
// of the object a named by the string b.
func index(a, b dval) (dval, bool) {
	if a.opt || b.opt {
		return dval{}, false
	}
	switch {
	case a.k == dObject && b.k == dString:
		return a.field(b.s)
	case b.k == dInt && (a.k == dList || a.k == dArray):
		var out dval
		i, found := int64(0), false
		a.each(func(e dval) bool {
			if i == b.i {
				out, found = e, true
				return false
			}
			i++
			return true
		})
		return out, found
	}
	return dval{}, false
}

// joined is the strings extension's list.join(sep): the elements, which
// must all be strings, joined by sep.
func joined(list, sep dval) (dval, bool) {
	if sep.k != dString || sep.opt || list.opt {
		return dval{}, false
	}
	var b strings.Builder
	n, ok := 0, true
	if !list.each(func(e dval) bool {
		if e.k != dString || e.opt {
			ok = false
			return false
		}
		if n > 0 {
			b.WriteString(sep.s)
		}
		b.WriteString(e.s)
		n++
		return true
	}) || !ok {
		return dval{}, false // join: invalid input
	}
	return dval{k: dString, s: b.String()}, true
}

// directSubstring is a.substring(b) of cel-go's strings extension: from
// the code point b on; false for an index out of range.
func directSubstring(a, b dval) (dval, bool) {
	if a.k != dString || b.k != dInt || a.opt || b.opt {
		return dval{}, false
	}
	runes := []rune(a.s)
	if b.i < 0 || b.i > int64(len(runes)) {
		return dval{}, false // index out of range
	}
	return dval{k: dString, s: string(runes[b.i:])}, true
}

// runeIndex is cel-go's strings extension's indexOf(str, substr) (or
// lastIndexOf): the index in code points of the first (last) occurrence,
// -1 for none, the strings compared as runes (invalid UTF-8 read as
// U+FFFD), as it compares them.
func runeIndex(str, substr string, last bool) int64 {
	runes := []rune(str)
	if substr == "" {
		if last {
			return int64(len(runes))
		}
		return 0
	}
	if last && len(str) < len(substr) {
		return -1
	}
	sub := []rune(substr)
	match := func(i int) bool {
		for j := range sub {
			if runes[i+j] != sub[j] {
				return false
			}
		}
		return true
	}
	if last {
		for i := min(len(runes)-1, len(runes)-len(sub)); i >= 0; i-- {
			if match(i) {
				return int64(i)
			}
		}
		return -1
	}
	if len(runes) == 0 {
		return -1
	}
	for i := 0; i < len(runes)-(len(sub)-1); i++ {
		if match(i) {
			return int64(i)
		}
	}
	return -1
}

// comprehension evaluates a comprehension over a list as cel-go's folder
// does: for each element, the loop condition (a false one stops), then
// the step into the accumulator; then the result.
func (c *dcompiler) comprehension(x celast.ComprehensionExpr) (dexpr, bool) {
	if x.HasIterVar2() || len(c.scope)+2 > maxSlots {
		return nil, false
	}
	rng, ok := c.compile(x.IterRange())
	if !ok {
		return nil, false
	}
	init, ok := c.compile(x.AccuInit())
	if !ok {
		return nil, false
	}
	accu := len(c.scope)
	c.scope = append(c.scope, x.AccuVar())
	defer func() { c.scope = c.scope[:accu] }()
	result, ok := c.compile(x.Result())
	if !ok {
		return nil, false
	}
	iter := len(c.scope)
	c.scope = append(c.scope, x.IterVar())
	cond, ok := c.compile(x.LoopCondition())
	if !ok {
		return nil, false
	}
	step, ok := c.compile(x.LoopStep())
	if !ok {
		return nil, false
	}
	return func(f *dframe) (dval, bool) {
		r, ok := rng(f)
		if !ok || r.opt {
			return dval{}, false
		}
		// Over a map, cel-go iterates its keys in Go's random map order:
		// here they go in the JSON's order, and a result that the order
		// could change (a list of two keys or more, from filter or map)
		// gives up. The other macros' results (all, exists, exists_one: a
		// bool) are the same in any order when no element fails, and the
		// evaluation gives up where one does.
		overMap := r.k == dObject
		if overMap {
			keys, ok := r.keys()
			if !ok {
				return dval{}, false
			}
			r = dval{k: dList, list: keys}
		}
		if r.k != dList && r.k != dArray {
			return dval{}, false
		}
		a, ok := init(f)
		if !ok {
			return dval{}, false
		}
		f.slots[f.base+accu] = a
		failed := false
		r.each(func(e dval) bool {
			f.slots[f.base+iter] = e
			c, ok := cond(f)
			if !ok || c.k != dBool || c.opt {
				failed = true
				return false
			}
			if !c.b {
				return false
			}
			s, ok := step(f)
			if !ok {
				failed = true
				return false
			}
			f.slots[f.base+accu] = s
			return true
		})
		if failed {
			return dval{}, false
		}
		v, ok := result(f)
		if ok && overMap && !(v.k == dBool || (v.k == dList && len(v.list) <= 1)) {
			return dval{}, false
		}
		return v, ok
	}, true
}
