package jsonscan

import (
	"bytes"
	"iter"
	"sort"
)

// Index is where each object and array of a valid JSON value ends, found
// in one pass over it, so that reading the members of one level skips its
// nested objects and arrays without scanning them again (Members,
// Elements); and how deep the value nests (Depth). The pass looks at
// strings eight bytes at a time.
type Index struct {
	starts, ends []int32 // by start, ascending
	depth        int
}

// Span is where a value is in the indexed JSON: b[Start:End].
type Span struct{ Start, End int }

// NewIndex indexes b, valid JSON (Valid) of less than 2 GiB.
func NewIndex(b []byte) *Index {
	// At most as many as there are brackets (some may be in strings):
	// counted fast, so the slices never grow.
	n := bytes.Count(b, []byte{'{'}) + bytes.Count(b, []byte{'['})
	x := &Index{starts: make([]int32, 0, n), ends: make([]int32, 0, n), depth: 1}
	var open []int32 // the positions in starts of the objects and arrays open
	for i := 0; i < len(b); i++ {
		if !structural[b[i]] {
			continue
		}
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case '{', '[':
			open = append(open, int32(len(x.starts)))
			x.starts, x.ends = append(x.starts, int32(i)), append(x.ends, int32(len(b)))
			d := len(open)
			if j := skipSpace(b, i+1); j < len(b) && b[j] != '}' && b[j] != ']' {
				d++
			}
			x.depth = max(x.depth, d)
		default: // '}', ']'
			if n := len(open); n > 0 {
				x.ends[open[n-1]] = int32(i + 1)
				open = open[:n-1]
			}
		}
	}
	return x
}

// Depth is how deep the indexed value nests, as fastjson counts it (its
// MaxDepth): 1 for the value itself, one more for each object or array
// around a value, so that an empty object or array adds nothing below it.
func (x *Index) Depth() int { return x.depth }

// End returns the index just past the value that starts at b[i], b the
// indexed value.
func (x *Index) End(b []byte, i int) int {
	if c := b[i]; c != '{' && c != '[' {
		return skipValue(b, i)
	}
	k := sort.Search(len(x.starts), func(k int) bool { return x.starts[k] >= int32(i) })
	if k < len(x.starts) && x.starts[k] == int32(i) {
		return int(x.ends[k])
	}
	return skipValue(b, i) // not indexed: b is not the indexed value
}

// Members yields the quoted key and the span of the value of each member
// of the object that starts at b[i], in order, repeated names included; b
// is the indexed value.
func (x *Index) Members(b []byte, i int) iter.Seq2[[]byte, Span] {
	return func(yield func([]byte, Span) bool) {
		members(b, i, x.End, func(key []byte, start, end int) bool { return yield(key, Span{start, end}) })
	}
}

// Elements yields the span of each element of the array that starts at
// b[i], in order; b is the indexed value.
func (x *Index) Elements(b []byte, i int) iter.Seq[Span] {
	return func(yield func(Span) bool) {
		if i >= len(b) || b[i] != '[' {
			return
		}
		for i++; ; {
			i = skipSpace(b, i)
			if i >= len(b) || b[i] == ']' {
				return
			}
			end := x.End(b, i)
			if !yield(Span{i, end}) {
				return
			}
			i = skipSpace(b, end)
			if i < len(b) && b[i] == ',' {
				i++
			}
		}
	}
}
