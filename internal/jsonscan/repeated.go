package jsonscan

import (
	"bytes"
	"unicode/utf8"
)

// RepeatedKey finds the first object of the indexed value in which a
// member's name is repeated, as encoding/json reads names (jsonName), and
// returns that name and where
// the value of its second occurrence starts in the JSON. The apiserver never sends an
// object with a repeated name (it encodes what it decoded), and its strict
// field validation, kubectl's default, refuses one on the way in; readers
// here take the first of a repeated name (Members) where encoding/json and
// JSON Patch take the last, so tollgate refuses one too rather than decide
// on one value and patch another, where its input may not be the
// apiserver's (offline reviews and Pods). The server does not call it: on
// a captured review it costs about twice the validating pass
// (BenchmarkDecode in internal/webhook, 25 µs to 71 µs with it), to
// refuse what the apiserver never sends.
//
// One pass over the objects in the order the index holds them: each
// member's value that is an object or array is the next indexed value at
// or after it, so no value is searched for twice.
func (d Indexed) RepeatedKey() (name string, at int, found bool) {
	b, x := d.b, d.x
	if x == nil {
		return "", 0, false
	}
	var names [][]byte // reused: an object's names so far
	for k, start := range x.starts {
		if b[start] != '{' {
			continue
		}
		names = names[:0]
		next := k + 1 // the next indexed value: a child, or a child's descendant
		end := func(b []byte, i int) int {
			if c := b[i]; c != '{' && c != '[' {
				return skipValue(b, i)
			}
			for next < len(x.starts) && int(x.starts[next]) < i {
				next++
			}
			return int(x.ends[next])
		}
		members(b, int(start), end, func(key []byte, value, _ int) bool {
			for _, seen := range names {
				if sameName(seen, key) {
					name, at, found = jsonName(key), value, true
					return false
				}
			}
			names = append(names, key)
			return true
		})
		if found {
			return name, at, true
		}
	}
	return "", 0, false
}

// sameName compares two quoted names as encoding/json reads them.
func sameName(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if bytes.IndexByte(a, '\\') < 0 && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(a) && utf8.Valid(b) {
		return false
	}
	return jsonName(a) == jsonName(b)
}

// jsonName is a quoted name as encoding/json reads it: unescaped, and each
// byte that is not valid UTF-8 read as U+FFFD, so that "\xf2" and "\x83"
// are one name, as they are to the apiserver's decoder. (Converting a
// string to runes reads invalid bytes so, one U+FFFD each.)
func jsonName(quoted []byte) string {
	s := Unescape(quoted)
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}
