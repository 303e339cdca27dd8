package cel

import (
	"bytes"
	"unicode/utf8"
	"unique"
	"unsafe"

	"github.com/valyala/fastjson/fastfloat"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// dkind is the kind of a direct value (direct.go).
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
	doc        *document
	start, end int
	list       []dval
}

func dBoolOf(b bool) dval { return dval{k: dBool, b: b} }

// jsonValue is the value at span of d, as member (lazy.go) reads it:
// strings unescaped as fastjson unescapes them (the raw bytes when there
// is nothing to unescape), numbers as fastfloat's int64 where it reads
// one (else a double, not operated on), objects and arrays by their span.
func jsonValue(d *document, s jsonscan.Span) dval {
	raw := d.raw[s.Start:s.End]
	v := dval{doc: d, start: s.Start, end: s.End}
	switch raw[0] {
	case '{':
		v.k = dObject
	case '[':
		v.k = dArray
	case '"':
		v.k = dString
		inner := raw[1 : len(raw)-1]
		if bytes.IndexByte(inner, '\\') < 0 {
			v.s = unsafe.String(unsafe.SliceData(inner), len(inner))
		} else {
			v.s = jsonscan.Unescape(raw)
		}
	case 't':
		v.k, v.b = dBool, true
	case 'f':
		v.k = dBool
	case 'n':
		v.k = dNull
	default:
		if i, err := fastfloat.ParseInt64(unsafe.String(unsafe.SliceData(raw), len(raw))); err == nil {
			v.k, v.i = dInt, i
		} else {
			v.k = dOther
		}
	}
	return v
}

// directRead is what the direct evaluator read of a document, kept for
// the review's other policies: the members of objects and the elements
// of arrays, by where they start, and the values of paths from its
// object.
type directRead struct {
	end      int // the object's, once read
	members  map[int][]dmember
	elements map[int][]jsonscan.Span
	paths    []dpath // values selected from the object (document.path)
	// memberSlab and elementSlab hold the slices of members and elements
	// end to end: a few allocations per review instead of a few per
	// object.
	memberSlab  []dmember
	elementSlab []jsonscan.Span
}

// rootValue is the document's object.
func (d *document) rootValue() dval {
	if d.read.end == 0 {
		d.read.end = d.index.End(d.raw, d.start)
	}
	return dval{k: dObject, doc: d, start: d.start, end: d.read.end}
}

// dmember is a member of an object: its name, unescaped, and its value.
type dmember struct {
	name string
	at   jsonscan.Span
}

// membersAt are the members of the object at d.raw[start], in order,
// repeated names included.
func (d *document) membersAt(start int) []dmember {
	if m, ok := d.read.members[start]; ok {
		return m
	}
	if d.read.members == nil {
		d.read.members = make(map[int][]dmember, 32)
		d.read.memberSlab = make([]dmember, 0, 64)
	}
	from := len(d.read.memberSlab)
	for k, s := range d.index.Members(d.raw, start) {
		inner := k[1 : len(k)-1]
		name := unsafe.String(unsafe.SliceData(inner), len(inner)) // the review's bytes, kept as long
		if bytes.IndexByte(inner, '\\') >= 0 {
			name = jsonscan.Unescape(k)
		}
		d.read.memberSlab = append(d.read.memberSlab, dmember{name, s})
	}
	out := d.read.memberSlab[from:len(d.read.memberSlab):len(d.read.memberSlab)]
	d.read.members[start] = out
	return out
}

// elementsAt are the elements of the array at d.raw[start], in order.
func (d *document) elementsAt(start int) []jsonscan.Span {
	if e, ok := d.read.elements[start]; ok {
		return e
	}
	if d.read.elements == nil {
		d.read.elements = make(map[int][]jsonscan.Span, 16)
		d.read.elementSlab = make([]jsonscan.Span, 0, 64)
	}
	from := len(d.read.elementSlab)
	for s := range d.index.Elements(d.raw, start) {
		d.read.elementSlab = append(d.read.elementSlab, s)
	}
	out := d.read.elementSlab[from:len(d.read.elementSlab):len(d.read.elementSlab)]
	d.read.elements[start] = out
	return out
}

// field is the member name of the JSON object v, the last of that name as
// decoding keeps it; false when there is none.
func (v dval) field(name string) (dval, bool) {
	if v.doc == nil { // the empty map {}
		return dval{}, false
	}
	ms := v.doc.membersAt(v.start)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].name == name {
			return jsonValue(v.doc, ms[i].at), true
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
	ms := v.doc.membersAt(v.start)
	out := make([]dval, len(ms))
	var seen map[string]bool
	if len(ms) > 16 {
		seen = make(map[string]bool, len(ms))
	}
	for i, m := range ms {
		if seen != nil {
			if seen[m.name] {
				return nil, false
			}
			seen[m.name] = true
		} else {
			for _, p := range ms[:i] {
				if p.name == m.name {
					return nil, false
				}
			}
		}
		out[i] = dval{k: dString, s: m.name}
	}
	return out, true
}

// hasField tells whether the JSON object v has a member name.
func (v dval) hasField(name string) bool {
	if v.doc == nil { // the empty map {}
		return false
	}
	for _, m := range v.doc.membersAt(v.start) {
		if m.name == name {
			return true
		}
	}
	return false
}

// path is the value at names from the document's object (walk), kept by
// key (the names joined) for the review's other policies. The keys are
// unique handles, compared as pointers: a review reads a few paths (at
// most 3 on the captured Pod in BenchmarkPolicies, BenchmarkTwenty and
// BenchmarkLibraryPod), found in a scan cheaper than hashing; past
// maxPaths they are walked each time.
func (d *document) path(key unique.Handle[string], names []string) (dval, bool) {
	for i := range d.read.paths {
		if r := &d.read.paths[i]; r.key == key {
			return r.v, r.ok
		}
	}
	v, ok := walk(d.rootValue(), true, names)
	if len(d.read.paths) < maxPaths {
		if d.read.paths == nil {
			d.read.paths = make([]dpath, 0, 4)
		}
		d.read.paths = append(d.read.paths, dpath{key, v, ok})
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
		for _, s := range v.doc.elementsAt(v.start) {
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
		return int64(len(v.doc.elementsAt(v.start))), true
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

// sizes are v's known sizes for the bound, as valueSizes reads them of
// v's CEL value, without making it: its own, and, if walk, those
// of the values nested in it, read up to valueWalkLimit of them. An
// object with a repeated name counts each member, where its CEL map
// counts its names once: a larger size, which still bounds.
func (v dval) sizes(walk bool) known {
	k := known{a: v.own(), set: true}
	if walk {
		budget := valueWalkLimit
		k.a.nc, k.a.ns, k.nested = v.nestedSizes(&budget)
	}
	return k
}

// own is own (valuesizes.go) of v's CEL value.
func (v dval) own() aval {
	switch {
	case v.k == dString:
		return aval{s: float64(utf8.RuneCountInString(v.s))}
	case v.k == dList:
		return aval{c: float64(len(v.list))}
	case v.k == dArray:
		return aval{c: float64(len(v.doc.elementsAt(v.start)))}
	case v.k == dObject && v.doc != nil:
		return aval{c: float64(len(v.doc.membersAt(v.start)))}
	case v.k == dObject:
		return aval{}
	}
	return scalar
}

// nestedSizes is nestedSizes (valuesizes.go) of v's CEL value.
func (v dval) nestedSizes(budget *int) (nc, ns float64, ok bool) {
	visit := func(x dval) bool {
		*budget--
		if *budget < 0 {
			return false
		}
		s := x.own()
		xc, xs, ok := x.nestedSizes(budget)
		nc, ns = max(nc, s.c, xc), max(ns, s.s, xs)
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
		for _, m := range v.doc.membersAt(v.start) {
			if !visit(dval{k: dString, s: m.name}) || !visit(jsonValue(v.doc, m.at)) {
				return 0, 0, false
			}
		}
		return nc, ns, true
	}
	return 0, 0, true
}
