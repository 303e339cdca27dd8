package jsonscan

import (
	"bytes"
	"iter"
	"unsafe"
)

// Indexed is valid JSON and its Index, made in the one pass that validates
// it: members are then found with the nested objects and arrays they pass
// skipped by the index, not scanned again. A review's objects are most of
// its bytes and are passed over to reach the request's other fields.
type Indexed struct {
	b     []byte
	x     *Index
	sizes Sizes
	sized bool
}

// ValidIndexed checks b as Valid does, and indexes it in the same pass;
// with sizing, the same pass reads the sizes of the values it names
// (Sizes).
func ValidIndexed(b []byte, sizing *Sizing) (Indexed, error) {
	return ValidIndexedBelow(b, sizing, 0)
}

// ValidIndexedBelow is ValidIndexed for JSON whose values levels down are
// each what Valid accepts: up to levels more objects and arrays nested
// than it allows. An AdmissionReview carries the objects the apiserver
// decoded, which nest up to encoding/json's limit, two levels down
// (request.object).
func ValidIndexedBelow(b []byte, sizing *Sizing, levels int) (Indexed, error) {
	// At most as many as there are brackets, as NewIndex counts them: two
	// vectorized counts cost less than one scalar pass counting both, or
	// than slices grown from empty (BenchmarkValid).
	n := bytes.Count(b, []byte{'{'}) + bytes.Count(b, []byte{'['})
	x := &Index{starts: make([]int32, 0, n), ends: make([]int32, 0, n), depth: 1}
	z := newSizer(sizing)
	if !validIndex(b, x, z, maxNesting+levels) {
		return Indexed{}, Valid(b)
	}
	d := Indexed{b: b, x: x}
	if z != nil {
		d.sizes, d.sized = z.sizes, true
	}
	return d, nil
}

// IndexedOf is b with its index x (NewIndex's), and no sizes.
func IndexedOf(b []byte, x *Index) Indexed { return Indexed{b: b, x: x} }

// Sizes are the sizes of the values the Sizing given to ValidIndexed
// names, the largest of each over them (zero for none there); false when
// there was none.
func (d Indexed) Sizes() (Sizes, bool) { return d.sizes, d.sized }

// JSON is the whole indexed value, as given.
func (d Indexed) JSON() []byte { return d.b }

// Span is the span of the value raw starts with, when raw is a slice of
// the document (a value of it, as Bytes returns, which may run on past
// its value).
func (d Indexed) Span(raw []byte) (Span, bool) { return d.within(raw) }

// Pairs yields the quoted key and the span of each member of the object
// at s, in order, repeated names included; none when s is absent or no
// object.
func (d Indexed) Pairs(s Span) iter.Seq2[[]byte, Span] {
	return func(yield func([]byte, Span) bool) {
		if s.End <= s.Start || d.b[s.Start] != '{' {
			return
		}
		for k, v := range d.x.Members(d.b[:s.End], s.Start) {
			if !yield(k, v) {
				return
			}
		}
	}
}

// Index is the index of the value, as NewIndex would make it.
func (d Indexed) Index() *Index { return d.x }

// Root is the span of the value, spaces around it left out.
func (d Indexed) Root() Span {
	i := skipSpace(d.b, 0)
	if i >= len(d.b) {
		return Span{}
	}
	return Span{i, d.x.End(d.b, i)}
}

// Bytes is the JSON of s, nil for the zero Span (absent).
func (d Indexed) Bytes(s Span) []byte {
	if s.End <= s.Start {
		return nil
	}
	return d.b[s.Start:s.End]
}

// Members returns the spans of the members named by keys of the object at
// s, the zero Span for those it lacks (or all, when s is no object); the
// first of a repeated name, keys compared unescaped, as Members does.
func (d Indexed) Members(s Span, keys ...string) []Span {
	out := make([]Span, len(keys))
	left := len(keys)
	if s.End <= s.Start {
		return out
	}
	members(d.b[:s.End], s.Start, d.x.End, func(key []byte, start, end int) bool {
		for n, k := range keys {
			if out[n].End == 0 && keyIs(key, k) {
				out[n] = Span{start, end}
				left--
			}
		}
		return left > 0
	})
	return out
}

// MembersOf is Members(raw, keys...) for raw a value of the document (a
// slice of it, as Bytes returns): the same values, found with the index.
// Any other raw, and every raw of the zero Indexed, is scanned by Members.
func (d Indexed) MembersOf(raw []byte, keys ...string) [][]byte {
	at, ok := d.within(raw)
	if !ok {
		return Members(raw, keys...)
	}
	return d.BytesOf(d.Members(at, keys...))
}

// BytesOf is the JSON of each span (Bytes): nil for the zero Span.
func (d Indexed) BytesOf(spans []Span) [][]byte {
	out := make([][]byte, len(spans))
	for n, s := range spans {
		out[n] = d.Bytes(s)
	}
	return out
}

// ElementsOf is Elements(raw) for raw a value of the document, found with
// the index; any other raw is scanned by Elements.
func (d Indexed) ElementsOf(raw []byte) [][]byte {
	at, ok := d.within(raw)
	if !ok {
		return Elements(raw)
	}
	if d.b[at.Start] != '[' {
		return nil
	}
	out := [][]byte{}
	for s := range d.x.Elements(d.b[:at.End], at.Start) {
		out = append(out, d.b[s.Start:s.End])
	}
	return out
}

// within is the span of the value raw starts with, when raw is a slice of
// the document (it may run on past its value).
func (d Indexed) within(raw []byte) (Span, bool) {
	if d.x == nil || len(raw) == 0 {
		return Span{}, false
	}
	base, p := uintptr(unsafe.Pointer(unsafe.SliceData(d.b))), uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	if p < base || p-base+uintptr(len(raw)) > uintptr(len(d.b)) {
		return Span{}, false
	}
	i := int(p-base) + skipSpace(raw, 0)
	if i >= int(p-base)+len(raw) {
		return Span{}, false
	}
	return Span{i, d.x.End(d.b, i)}, true
}
