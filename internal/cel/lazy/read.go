package lazy

import (
	"bytes"
	"unsafe"

	"github.com/valyala/fastjson/fastfloat"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// read is what Members, Elements and End read of a document, kept for
// the review's other policies: the members of objects and the elements
// of arrays, by where they start. memberSlab and elementSlab hold the
// slices end to end: a few allocations per review instead of a few per
// object.
type read struct {
	end         int // the object's, once read
	members     map[int][]Member
	elements    map[int][]jsonscan.Span
	memberSlab  []Member
	elementSlab []jsonscan.Span
}

// End is where the document's object ends.
func (d *Document) End() int {
	if d.read.end == 0 {
		d.read.end = d.index.End(d.raw, d.start)
	}
	return d.read.end
}

// Start is where the document's object starts.
func (d *Document) Start() int { return d.start }

// JSON is the value at s of the document, bytes of the review.
func (d *Document) JSON(s jsonscan.Span) []byte { return d.raw[s.Start:s.End] }

// Member is a member of an object: its name, unescaped, and where its
// value is.
type Member struct {
	Name string
	At   jsonscan.Span
}

// Members are the members of the object at start, in order, repeated
// names included. A name without escapes is the review's bytes, kept as
// long.
func (d *Document) Members(start int) []Member {
	if m, ok := d.read.members[start]; ok {
		return m
	}
	if d.read.members == nil {
		d.read.members = make(map[int][]Member, 32)
		d.read.memberSlab = make([]Member, 0, 64)
	}
	from := len(d.read.memberSlab)
	for k, s := range d.index.Members(d.raw, start) {
		d.read.memberSlab = append(d.read.memberSlab, Member{unquote(k, true), s})
	}
	out := d.read.memberSlab[from:len(d.read.memberSlab):len(d.read.memberSlab)]
	d.read.members[start] = out
	return out
}

// Elements are where the elements of the array at start are, in order.
func (d *Document) Elements(start int) []jsonscan.Span {
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

// ScalarKind is the kind of a JSON scalar as toGo decodes it.
type ScalarKind uint8

const (
	Null ScalarKind = iota
	Bool
	Int
	Double
	String
)

// Scalar is a JSON scalar as toGo (ObjectFromJSON) decodes it: strings
// unescaped as fastjson unescapes them, numbers as fastjson's Int64 then
// Float64 read the token (fastfloat's ParseInt64, then Parse), true,
// false, null. The one reading of scalars, for the lazy values (Native)
// and the direct evaluator's.
type Scalar struct {
	Kind ScalarKind
	B    bool
	I    int64
	F    float64
	S    string
}

// ReadScalar reads the scalar raw (valid JSON). alias: a string without
// escapes may be raw's bytes themselves, valid as long as they are.
func ReadScalar(raw []byte, alias bool) Scalar {
	switch raw[0] {
	case '"':
		return Scalar{Kind: String, S: unquote(raw, alias)}
	case 't':
		return Scalar{Kind: Bool, B: true}
	case 'f':
		return Scalar{Kind: Bool}
	case 'n':
		return Scalar{}
	}
	s := unsafe.String(unsafe.SliceData(raw), len(raw)) // parsed, not kept
	if i, err := fastfloat.ParseInt64(s); err == nil {
		return Scalar{Kind: Int, I: i}
	}
	f, _ := fastfloat.Parse(s)
	return Scalar{Kind: Double, F: f}
}

// unquote is the quoted JSON string q unescaped; alias: without escapes,
// q's bytes themselves.
func unquote(q []byte, alias bool) string {
	inner := q[1 : len(q)-1]
	if alias && bytes.IndexByte(inner, '\\') < 0 {
		return unsafe.String(unsafe.SliceData(inner), len(inner))
	}
	return jsonscan.Unescape(q)
}
