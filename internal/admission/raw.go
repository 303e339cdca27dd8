package admission

import (
	"bytes"
	"encoding/json"
)

// members returns the raw JSON of the members named by keys of the object
// that b starts with (what follows the object is ignored), nil for those it
// lacks. b must be valid JSON (ValidJSON): the scan trusts its syntax and
// never recurses, so depth costs nothing. Which member, when several match,
// is fastjson's choice, so that both readings of a review agree: the first
// whose key is written exactly as asked, else the first that unescapes to it.
//
// It lets Decode hand out the request's objects as slices of the body
// instead of encoding them again from the parsed value.
func members(b []byte, keys ...string) [][]byte {
	out := make([][]byte, len(keys))
	exact := make([]bool, len(keys))
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return out
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return out // '}': no more members
		}
		kEnd := skipString(b, i)
		key := b[i:kEnd]
		i = skipSpace(b, kEnd) + 1 // past ':'
		i = skipSpace(b, i)
		var value []byte // found lazily: skipping a value costs a scan
		valueEnd := func() int {
			if value == nil {
				value = b[i:skipValue(b, i)]
			}
			return i + len(value)
		}
		for n, k := range keys {
			if exact[n] {
				continue
			}
			switch e, u := keyIs(key, k); {
			case e:
				valueEnd()
				out[n], exact[n] = value, true
			case u && out[n] == nil:
				valueEnd()
				out[n] = value
			}
		}
		if allExact(exact) {
			return out
		}
		i = skipSpace(b, valueEnd())
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
}

// member is members for one key, and its value may run to the end of b:
// enough to read the members of an object nested in b.
func member(b []byte, key string) []byte {
	return members(b, key)[0]
}

func allExact(exact []bool) bool {
	for _, e := range exact {
		if !e {
			return false
		}
	}
	return true
}

// keyIs compares a quoted JSON key with key: written exactly so, or only
// once unescaped (never, from the apiserver).
func keyIs(quoted []byte, key string) (exact, unescaped bool) {
	raw := quoted[1 : len(quoted)-1]
	for _, c := range raw {
		if c == '\\' {
			var s string
			return false, json.Unmarshal(quoted, &s) == nil && s == key
		}
	}
	return string(raw) == key, false
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
