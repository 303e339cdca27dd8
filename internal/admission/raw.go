package admission

import (
	"bytes"
	"encoding/json"

	"github.com/valyala/fastjson"
)

// members returns the raw JSON of the members named by keys of the object
// that b starts with (what follows the object is ignored), nil for those it
// lacks; the first of that name, keys compared unescaped, when a name is
// repeated (the apiserver never repeats one). b must be valid JSON
// (ValidJSON): the scan trusts its syntax and never recurses, so depth
// costs nothing.
//
// It lets Decode hand out the request's objects as slices of the body and
// parse only the small members it reads.
func members(b []byte, keys ...string) [][]byte { return scan(b, false, keys) }

// openMembers is members, except that the value found last runs to the end
// of b: enough to read its own members, and it saves skipping over it (the
// request, which holds the objects, is most of a review).
func openMembers(b []byte, keys ...string) [][]byte { return scan(b, true, keys) }

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

// member is members for one key, and its value may run to the end of b:
// enough to read the members of an object nested in b.
func member(b []byte, key string) []byte {
	return members(b, key)[0]
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

// skipString returns the index just past the string that starts at b[i]:
// the next quote not escaped, that is, after an even run of backslashes.
// IndexByte makes it a vectorised search.
func skipString(b []byte, i int) int {
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return len(b)
		}
		j += q
		n := 0
		for k := j - 1; k > i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
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
	default: // a number, true, false or null
		j := i
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

// typeOf is the type of a valid JSON value from its first byte; null for
// an absent one.
func typeOf(raw []byte) fastjson.Type {
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

// rawString is the string a valid JSON value holds, "" when it is not one.
func rawString(raw []byte) string {
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
