package jsonscan

import "iter"

// Pairs yields the quoted key and the raw value of each member of the
// object b starts with, in order, repeated names included; nothing when b
// is not an object. b must be valid JSON (Valid). Compare a key with KeyIs.
func Pairs(b []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func(key, value []byte) bool) {
		members(b, skipSpace(b, 0), skipValue, func(key []byte, start, end int) bool { return yield(key, b[start:end]) })
	}
}

// members calls yield with the quoted key and the bounds of the value of
// each member of the object at b[i], in order, until it returns false; end
// finds where a value starting at an index ends.
func members(b []byte, i int, end func(b []byte, i int) int, yield func(key []byte, start, end int) bool) {
	if i >= len(b) || b[i] != '{' {
		return
	}
	for i++; ; {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return // '}'
		}
		kEnd := skipString(b, i)
		key := b[i:kEnd]
		i = skipSpace(b, skipSpace(b, kEnd)+1) // past ':'
		if i >= len(b) {
			return
		}
		e := end(b, i)
		if !yield(key, i, e) {
			return
		}
		i = skipSpace(b, e)
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
}

// KeyIs tells whether a quoted JSON key, as Pairs yields it, is key once
// unescaped.
func KeyIs(quoted []byte, key string) bool { return keyIs(quoted, key) }

// StringEnd returns the index just past the string that starts at b[i]
// (its closing quote's, plus one), b valid JSON; it looks at eight bytes
// at a time.
func StringEnd(b []byte, i int) int { return skipString(b, i) }
