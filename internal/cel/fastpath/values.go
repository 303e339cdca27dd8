package fastpath

import (
	"unicode/utf8"
	"unique"

	"github.com/tollgate-dev/tollgate/internal/cel/bound"
	"github.com/tollgate-dev/tollgate/internal/cel/lazy"
	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// dkind is the kind of a direct value.
type dkind uint8

const (
	dNull dkind = iota
	dBool
	dInt
	dString
	dObject // a JSON object of a document, or the empty map {} (no document)
	dArray  // a JSON array of a document
	dList   // a list the expression made
	dNone   // optional.none()
	dOther  // a value the direct evaluator carries but does not operate on (a double)
)

// dval is a value of the direct evaluator: what cel-go's value would be,
// for the kinds it models. A value read from a document keeps its span
// there (doc, start, end), where the lazy values read it. opt: an
// optional holding the value (optional.of; dNone is the empty one).
type dval struct {
	k          dkind
	opt, b     bool
	i          int64
	s          string
	doc        *lazy.Document
	start, end int
	list       []dval
}

func dBoolOf(b bool) dval { return dval{k: dBool, b: b} }

// jsonValue is the value at span of d, as the lazy values read it
// (lazy.ReadScalar; a string without escapes is the review's bytes),
// numbers other than an int64 a double, not operated on; objects and
// arrays by their span.
func jsonValue(d *lazy.Document, s jsonscan.Span) dval {
	raw := d.JSON(s)
	v := dval{doc: d, start: s.Start, end: s.End}
	switch raw[0] {
	case '{':
		v.k = dObject
		return v
	case '[':
		v.k = dArray
		return v
	}
	switch x := lazy.ReadScalar(raw, true); x.Kind {
	case lazy.String:
		v.k, v.s = dString, x.S
	case lazy.Bool:
		v.k, v.b = dBool, x.B
	case lazy.Int:
		v.k, v.i = dInt, x.I
	case lazy.Double:
		v.k = dOther
	default:
		v.k = dNull
	}
	return v
}

// rootValue is the document's object.
func rootValue(d *lazy.Document) dval {
	return dval{k: dObject, doc: d, start: d.Start(), end: d.End()}
}

// field is the member name of the JSON object v, the last of that name as
// decoding keeps it; false when there is none.
func (v dval) field(name string) (dval, bool) {
	if v.doc == nil { // the empty map {}
		return dval{}, false
	}
	ms := v.doc.Members(v.start)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Name == name {
			return jsonValue(v.doc, ms[i].At), true
		}
	}
	return dval{}, false
}

// keys are the names of the object v's members, in order, as strings:
// the keys of its CEL map; false when a name repeats (the map has it
// once, with the last value).
func (v dval) keys() ([]dval, bool) {
	if v.doc == nil { // the empty map {}
		return nil, true
	}
	ms := v.doc.Members(v.start)
	out := make([]dval, len(ms))
	var seen map[string]bool
	if len(ms) > 16 {
		seen = make(map[string]bool, len(ms))
	}
	for i, m := range ms {
		if seen != nil {
			if seen[m.Name] {
				return nil, false
			}
			seen[m.Name] = true
		} else {
			for _, p := range ms[:i] {
				if p.Name == m.Name {
					return nil, false
				}
			}
		}
		out[i] = dval{k: dString, s: m.Name}
	}
	return out, true
}

// hasField tells whether the JSON object v has a member name.
func (v dval) hasField(name string) bool {
	if v.doc == nil { // the empty map {}
		return false
	}
	for _, m := range v.doc.Members(v.start) {
		if m.Name == name {
			return true
		}
	}
	return false
}

// path is the value at names from the object of document doc (walk),
// kept by key (the names joined) for the review's other policies. The keys are
// unique handles, compared as pointers: a review reads a few paths (at
// most 3 on the captured Pod in BenchmarkPolicies, BenchmarkTwenty and
// BenchmarkLibraryPod), found in a scan cheaper than hashing; past
// maxPaths they are walked each time.
func (r *Review) path(doc int, key unique.Handle[string], names []string) (dval, bool) {
	paths := &r.paths[doc]
	for i := range *paths {
		if p := &(*paths)[i]; p.key == key {
			return p.v, p.ok
		}
	}
	v, ok := walk(rootValue(r.Docs[doc]), true, names)
	if len(*paths) < maxPaths {
		if *paths == nil {
			*paths = make([]dpath, 0, 4)
		}
		*paths = append(*paths, dpath{key, v, ok})
	}
	return v, ok
}

// maxPaths is how many paths' values a document keeps.
const maxPaths = 64

// dpath is a path's value, ok false where walking it gave up.
type dpath struct {
	key unique.Handle[string]
	v   dval
	ok  bool
}

// each calls f with each element of the list v (a JSON array or a made
// list) until f returns false; false when v is no list.
func (v dval) each(f func(dval) bool) bool {
	switch v.k {
	case dList:
		for _, e := range v.list {
			if !f(e) {
				break
			}
		}
		return true
	case dArray:
		for _, s := range v.doc.Elements(v.start) {
			if !f(jsonValue(v.doc, s)) {
				break
			}
		}
		return true
	}
	return false
}

// elements are the elements of the list v, false when v is no list.
func (v dval) elements() ([]dval, bool) {
	if v.k == dList {
		return v.list, true
	}
	var out []dval
	ok := v.each(func(e dval) bool { out = append(out, e); return true })
	return out, ok
}

// size is size(v) as cel-go has it, for lists and strings (code points);
// false otherwise (a map's size counts its distinct keys, which a JSON
// object with a repeated name does not show).
func (v dval) size() (int64, bool) {
	switch v.k {
	case dString:
		return int64(utf8.RuneCountInString(v.s)), true
	case dList:
		return int64(len(v.list)), true
	case dArray:
		return int64(len(v.doc.Elements(v.start))), true
	}
	return 0, false
}

// equal is v == w as cel-go decides it, for two scalars of one kind
// (null, bool, int, string); false in ok otherwise (other kinds, and
// mixed kinds, whose heterogeneous equality is not modelled).
func (v dval) equal(w dval) (eq, ok bool) {
	if v.opt || w.opt || v.k != w.k {
		return false, false
	}
	switch v.k {
	case dNull:
		return true, true
	case dBool:
		return v.b == w.b, true
	case dInt:
		return v.i == w.i, true
	case dString:
		return v.s == w.s, true
	}
	return false, false
}

// sizes are v's known sizes for the bound, as bound.ValueSizes reads
// them of v's CEL value, without making it: its own, and, if walk, those
// of the values nested in it, read up to bound.ValueWalkLimit of them.
// An object with a repeated name counts each member, where its CEL map
// counts its names once: a larger size, which still bounds.
func (v dval) sizes(walk bool) bound.Known {
	c, s := v.own()
	if !walk {
		return bound.KnownOf(c, s, false, 0, 0)
	}
	budget := bound.ValueWalkLimit
	nc, ns, ok := v.nestedSizes(&budget)
	return bound.KnownOf(c, s, ok, nc, ns)
}

// own are the own sizes of v's CEL value (bound.ValueSizes): entries,
// code points.
func (v dval) own() (c, s float64) {
	switch {
	case v.k == dString:
		return 0, float64(utf8.RuneCountInString(v.s))
	case v.k == dList:
		return float64(len(v.list)), 0
	case v.k == dArray:
		return float64(len(v.doc.Elements(v.start))), 0
	case v.k == dObject && v.doc != nil:
		return float64(len(v.doc.Members(v.start))), 0
	}
	return 0, 0
}

// nestedSizes are the largest own sizes of the values nested in v, as
// bound.ValueSizes reads them of v's CEL value; false past *budget values.
func (v dval) nestedSizes(budget *int) (nc, ns float64, ok bool) {
	visit := func(x dval) bool {
		*budget--
		if *budget < 0 {
			return false
		}
		c, s := x.own()
		xc, xs, ok := x.nestedSizes(budget)
		nc, ns = max(nc, c, xc), max(ns, s, xs)
		return ok
	}
	switch {
	case v.k == dList || v.k == dArray:
		ok = true
		v.each(func(e dval) bool { ok = visit(e); return ok })
		if !ok {
			return 0, 0, false
		}
		return nc, ns, true
	case v.k == dObject && v.doc != nil:
		for _, m := range v.doc.Members(v.start) {
			if !visit(dval{k: dString, s: m.Name}) || !visit(jsonValue(v.doc, m.At)) {
				return 0, 0, false
			}
		}
		return nc, ns, true
	}
	return 0, 0, true
}
