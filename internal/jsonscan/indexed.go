package jsonscan

import (
	"bytes"
	"unsafe"
)

// Indexed is valid JSON and its Index, made in the one pass that validates
// it: members are then found with the nested objects and arrays they pass
// skipped by the index, not scanned again. A review's objects are most of
// its bytes and are passed over to reach the request's other fields.
type Indexed struct {
	b []byte
	x *Index
}

// ValidIndexed checks b as Valid does, and indexes it in the same pass.
func ValidIndexed(b []byte) (Indexed, error) {
	n := bytes.Count(b, []byte{'{'}) + bytes.Count(b, []byte{'['})
	x := &Index{starts: make([]int32, 0, n), ends: make([]int32, 0, n), depth: 1}
	if !validIndex(b, x) {
		return Indexed{}, Valid(b)
	}
	return Indexed{b: b, x: x}, nil
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
	out := make([][]byte, len(keys))
	for n, s := range d.Members(at, keys...) {
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
