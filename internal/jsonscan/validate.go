package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// valid reports whether b is one JSON value, optionally surrounded by
// whitespace, exactly as encoding/json's Valid does with Go 1.27: the RFC
// 8259 grammar; no raw control character in a string; invalid UTF-8 and
// repeated names accepted; at most 10,000 objects and arrays nested
// (encoding/json's maxNestingDepth). It exists because reviews are
// validated on every request and encoding/json's general decoder is the
// slower one (BenchmarkValid); FuzzValid holds the two to the same answer.
//
// It never recurses: open objects and arrays are a stack of where they
// open.
func valid(b []byte) bool { return validIndex(b, nil, nil, maxNesting) }

// validIndex is valid with at most nesting objects and arrays nested, and
// when x is not nil it also indexes b into x, as NewIndex would (where
// each object and array ends, the depth), in the same pass; z, when not
// nil, reads the sizes of the values it names.
func validIndex(b []byte, x *Index, z *sizer, nesting int) bool {
	// The open objects and arrays, innermost last: where each opens in b
	// (b[at] tells an object from an array) and, with x, its position in
	// x.starts; len(open) is the depth of the values read.
	open := make([]opening, 0, 64)
	i := skipSpace(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '{', '[':
			if len(open) >= nesting {
				return false
			}
			object, o := b[i] == '{', opening{at: int32(i)}
			i = skipSpace(b, i+1)
			if x != nil {
				x.starts, x.ends = append(x.starts, o.at), append(x.ends, int32(i+1))
				x.depth = max(x.depth, len(open)+1)
				o.k = int32(len(x.starts) - 1)
			}
			if i < len(b) && b[i] == closer(object) {
				i++
				break
			}
			open = append(open, o)
			if x != nil {
				x.depth = max(x.depth, len(open)+1)
			}
			if z != nil {
				z.open(len(open), object)
			}
			if object {
				if i = memberName(b, i, z, len(open)); i < 0 {
					return false
				}
			}
			continue
		case '"':
			start := i
			if i = stringEnd(b, i); i < 0 {
				return false
			}
			if z != nil {
				z.value(start, i, len(open))
			}
		case 't':
			if i = literal(b, i, "true"); i < 0 {
				return false
			}
		case 'f':
			if i = literal(b, i, "false"); i < 0 {
				return false
			}
		case 'n':
			if i = literal(b, i, "null"); i < 0 {
				return false
			}
		default:
			if i = numberEnd(b, i); i < 0 {
				return false
			}
		}
		// A value ended before b[i]: a comma and the next value, or the
		// end of open objects and arrays, or of the input.
		for {
			i = skipSpace(b, i)
			if len(open) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			o := open[len(open)-1]
			object := b[o.at] == '{'
			if b[i] == closer(object) {
				if z != nil {
					z.close(len(open))
				}
				open = open[:len(open)-1]
				i++
				if x != nil {
					x.ends[o.k] = int32(i)
				}
				continue
			}
			if b[i] != ',' {
				return false
			}
			if z != nil {
				z.comma(len(open))
			}
			i = skipSpace(b, i+1)
			if object {
				if i = memberName(b, i, z, len(open)); i < 0 {
					return false
				}
			}
			break
		}
	}
}

// maxNesting is encoding/json's maxNestingDepth.
const maxNesting = 10000

// opening is an open object or array of validIndex: where it opens in
// the input, and with an index, its position in the index's starts.
type opening struct{ at, k int32 }

func closer(object bool) byte {
	if object {
		return '}'
	}
	return ']'
}

// memberName reads a member's name and colon at b[i], in the object at
// depth d, and returns where its value starts (spaces skipped), -1 if they
// are not there; z, when not nil, is told of the name.
func memberName(b []byte, i int, z *sizer, d int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	start := i
	if i = stringEnd(b, i); i < 0 {
		return -1
	}
	if z != nil {
		z.key(b, start, i, d)
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// stringEnd returns the index just past the string that starts at b[i],
// -1 if it is not a valid one. Eight bytes at a time it looks for a quote
// or a backslash (quoteOrBackslash) or a control character (a byte below
// 0x20: x-0x20 borrows into its high bit, unless the byte has it set).
func stringEnd(b []byte, i int) int {
	j := i + 1
	for {
		for j+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[j:])
			if m := quoteOrBackslash(x) | (x-ones*0x20)&^x&highs; m != 0 {
				j += bits.TrailingZeros64(m) / 8
				break
			}
			j += 8
		}
		for j < len(b) && b[j] != '"' && b[j] != '\\' && b[j] >= 0x20 {
			j++
		}
		if j >= len(b) {
			return -1
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1
		case c < 0x20:
			return -1
		}
		// An escape.
		if j+1 >= len(b) {
			return -1
		}
		switch b[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if j+6 > len(b) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) || !isHex(b[j+5]) {
				return -1
			}
			j += 6
		default:
			return -1
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// literal returns the index past word at b[i], -1 if it is not there.
func literal(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// numberEnd returns the index past the number at b[i], -1 if there is
// none: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
