package jsonscan

import (
	"bytes"
	"iter"
	"sort"
)

// Index is where each object and array of a valid JSON value ends, found
// in one pass over it, so that reading the members of one level skips its
// nested objects and arrays without scanning them again (Members,
// Elements); how deep the value nests (Depth); and, from the same pass,
// its sizes (Sizes). The pass looks at strings eight bytes at a time.
type Index struct {
	starts, ends []int32 // by start, ascending
	depth        int
	sizes        Sizes
	sized        bool // sizes read (NewIndex)
}

// Sizes bound the sizes of an indexed value: Entries every object's
// members (repeated names counted) and every array's elements; Strings
// every string's length, keys' included, in bytes between its quotes (a
// string has no more code points, unescaped: escapes only lengthen), but
// those inside the value of the top-level member named apart (NewIndex),
// which Apart bounds.
type Sizes struct{ Entries, Strings, Apart int }

// Span is where a value is in the indexed JSON: b[Start:End].
type Span struct{ Start, End int }

// indexed marks the bytes the index pass stops at: those that open or
// close a string, object or array, and commas, which it counts.
var indexed = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true, ',': true}

// NewIndex indexes b, valid JSON (Valid) of less than 2 GiB; when b is an
// object, the strings in the value of its member named apart (keys
// compared unescaped; none for "") are sized apart.
func NewIndex(b []byte, apart string) *Index {
	// At most as many as there are brackets (some may be in strings):
	// counted fast, so the slices never grow.
	n := bytes.Count(b, []byte{'{'}) + bytes.Count(b, []byte{'['})
	x := &Index{starts: make([]int32, 0, n), ends: make([]int32, 0, n), depth: 1, sized: true}
	// The objects and arrays open: their positions in starts, and their
	// entries so far (1 if not empty, plus their commas); on the stack
	// up to 32 deep.
	open := make([]struct{ at, entries int32 }, 0, 32)
	// keyNext: the next string at depth 1 is a key of the top-level
	// object; inApart: the strings are in the value of apart.
	rootObject, keyNext, inApart := false, false, false
	sz := &x.sizes
	for i := 0; i < len(b); i++ {
		if !indexed[b[i]] {
			continue
		}
		switch b[i] {
		case '"':
			end := skipString(b, i)
			l := max(end-i-2, 0)
			switch {
			case keyNext && len(open) == 1:
				keyNext = false
				inApart = apart != "" && end-i >= 2 && keyIs(b[i:end], apart)
				sz.Strings = max(sz.Strings, l)
			case inApart:
				sz.Apart = max(sz.Apart, l)
			default:
				sz.Strings = max(sz.Strings, l)
			}
			i = end - 1
		case ',':
			if k := len(open); k > 0 {
				open[k-1].entries++
				keyNext = k == 1 && rootObject
			}
		case '{', '[':
			d, e := len(open)+1, int32(0)
			if j := skipSpace(b, i+1); j < len(b) && b[j] != '}' && b[j] != ']' {
				d, e = d+1, 1
			}
			open = append(open, struct{ at, entries int32 }{int32(len(x.starts)), e})
			x.starts, x.ends = append(x.starts, int32(i)), append(x.ends, int32(len(b)))
			x.depth = max(x.depth, d)
			if len(open) == 1 {
				rootObject = b[i] == '{'
				keyNext = rootObject
			}
		default: // '}', ']'
			if k := len(open); k > 0 {
				x.ends[open[k-1].at] = int32(i + 1)
				sz.Entries = max(sz.Entries, int(open[k-1].entries))
				open = open[:k-1]
			}
		}
	}
	return x
}

// Sizes are the sizes of the indexed value; ok false when the index was
// made without them (ValidIndexed).
func (x *Index) Sizes() (s Sizes, ok bool) { return x.sizes, x.sized }

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
