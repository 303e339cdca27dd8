package jsonscan

import "bytes"

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
