package jsonscan

import "iter"

// Pairs yields the quoted key and the raw value of each member of the
// object b starts with, in order, repeated names included; nothing when b
// is not an object. b must be valid JSON (Valid). Compare a key with KeyIs.
func Pairs(b []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func(key, value []byte) bool) {
		i := skipSpace(b, 0)
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
			end := skipValue(b, i)
			if i >= len(b) || !yield(key, b[i:end]) {
				return
			}
			i = skipSpace(b, end)
			if i < len(b) && b[i] == ',' {
				i++
			}
		}
	}
}

// KeyIs tells whether a quoted JSON key, as Pairs yields it, is key once
// unescaped.
func KeyIs(quoted []byte, key string) bool { return keyIs(quoted, key) }
