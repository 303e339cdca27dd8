// Package jsonscan reads members and elements of JSON that has been
// validated (encoding/json's Valid) without parsing it: it finds where each
// value starts and ends and hands out slices of the input. Reviews and Pods
// are mostly objects tollgate only passes on; this reads the few parts it
// looks at, at a fraction of a full parse (BenchmarkMembers).
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"

	"github.com/valyala/fastjson"
)

// Members returns the raw JSON of the members named by keys of the object
// that b starts with (what follows the object is ignored), nil for those it
// lacks; the first of that name, keys compared unescaped, when a name is
// repeated (the apiserver never repeats one). b must be valid JSON
// (Valid): the scan trusts its syntax and never recurses, so depth
// costs nothing.
func Members(b []byte, keys ...string) [][]byte { return scan(b, false, keys) }

// OpenMembers is Members, except that the value found last runs to the end
// of b: enough to read its own members, and it saves skipping over it (the
// request, which holds the objects, is most of a review).
func OpenMembers(b []byte, keys ...string) [][]byte { return scan(b, true, keys) }

func scan(b []byte, open bool, keys []string) [][]byte {
	out := make([][]byte, len(keys))
	left := len(keys)
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return out
	}
	i++
	for left > 0 {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return out // '}': no more members
		}
		kEnd := skipString(b, i)
		key := b[i:kEnd]
		i = skipSpace(b, kEnd) + 1 // past ':'
		if i >= len(b) {
			return out // truncated: not valid JSON
		}
		i = skipSpace(b, i)
		end := -1
		for n, k := range keys {
			if out[n] != nil || !keyIs(key, k) {
				continue
			}
			if left--; left == 0 && open {
				out[n] = b[i:]
				return out
			}
			if end < 0 {
				end = skipValue(b, i)
			}
			out[n] = b[i:end]
		}
		if end < 0 {
			end = skipValue(b, i)
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
	return out
}

// Member is Members for one key, and its value may run to the end of b:
// enough to read the members of an object nested in b.
func Member(b []byte, key string) []byte {
	return Members(b, key)[0]
}

// keyIs compares a quoted JSON key with key, unescaping only a key with an
// escape (never, from the apiserver).
func keyIs(quoted []byte, key string) bool {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == key
	}
	var s string
	return json.Unmarshal(quoted, &s) == nil && s == key
}

// skipString returns the index just past the string that starts at b[i].
// It looks at eight bytes at a time for a quote or a backslash
// (quoteOrBackslash).
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		for j+8 <= len(b) {
			if m := quoteOrBackslash(binary.LittleEndian.Uint64(b[j:])); m != 0 {
				j += bits.TrailingZeros64(m) / 8
				break
			}
			j += 8
		}
		for j < len(b) && b[j] != '"' && b[j] != '\\' {
			j++
		}
		if j >= len(b) {
			return len(b)
		}
		if b[j] == '"' {
			return j + 1
		}
		j += 2 // an escape: the backslash and the byte it escapes
	}
}

// ones and highs are a byte's lowest and highest bit in each of eight.
const ones, highs = 0x0101010101010101, 0x8080808080808080

// quoteOrBackslash flags, in its high bit, each byte of x that is a quote
// or a backslash (a byte equal to c leaves a zero byte in x^c, which the
// subtraction finds; the lowest flag is exact, borrows only run upwards).
func quoteOrBackslash(x uint64) uint64 {
	q, bs := x^(ones*'"'), x^(ones*'\\')
	return ((q-ones)&^q | (bs-ones)&^bs) & highs
}

// structural marks the bytes that open or close a string, object or array.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			c := b[j]
			if !structural[c] {
				continue
			}
			switch c {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			default: // '}', ']'
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default: // a number, true, false or null; anything else (invalid
		// JSON) still moves the scan on by one byte
		j := i + 1
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return j
			}
			j++
		}
		return j
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// TypeOf is the type of a valid JSON value from its first byte; null for
// an absent one.
func TypeOf(raw []byte) fastjson.Type {
	i := skipSpace(raw, 0)
	if i >= len(raw) {
		return fastjson.TypeNull
	}
	switch raw[i] {
	case '{':
		return fastjson.TypeObject
	case '[':
		return fastjson.TypeArray
	case '"':
		return fastjson.TypeString
	case 't':
		return fastjson.TypeTrue
	case 'f':
		return fastjson.TypeFalse
	case 'n':
		return fastjson.TypeNull
	default:
		return fastjson.TypeNumber
	}
}

// String is the string a valid JSON value holds, "" when it is not one.
func String(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// Elements returns the raw JSON of each element of the array b, nil when b
// is not an array. b must be valid JSON.
func Elements(b []byte) [][]byte {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil
	}
	out := [][]byte{}
	for i++; ; {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] == ']' {
			return out
		}
		end := skipValue(b, i)
		out = append(out, b[i:end])
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
}

// Value returns the JSON value b starts with, without what may follow it
// (a value from OpenMembers runs on to the end of its document).
func Value(b []byte) []byte {
	i := skipSpace(b, 0)
	return b[i:skipValue(b, i)]
}
