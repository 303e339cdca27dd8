package jsonscan

// Depth is how deep the valid JSON value b nests, as fastjson counts it
// (its MaxDepth): 1 for the value itself, one more for each object or
// array around a value, so that an empty object or array adds nothing
// below it. It reads b once, strings eight bytes at a time.
func Depth(b []byte) int {
	open, deepest := 0, 1
	for i := 0; i < len(b); i++ {
		if !structural[b[i]] {
			continue
		}
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case '{', '[':
			open++
			d := open // the object or array itself
			if j := skipSpace(b, i+1); j < len(b) && b[j] != '}' && b[j] != ']' {
				d++ // its members
			}
			deepest = max(deepest, d)
		default: // '}', ']'
			open--
		}
	}
	return deepest
}
