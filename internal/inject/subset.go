package inject

// covers tells whether have carries everything want does: every key of a
// wanted object is in have with a value that contains the wanted one, and
// lists match element by element. The apiserver defaults fields of what was
// injected (terminationMessagePath, protocol, ...), so a Pod that already
// received an item holds a superset of it, never an exact copy.
func covers(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok {
				if isEmpty(wv) {
					continue
				}
				return false
			}
			if !covers(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !covers(h[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return have == want
	}
}

// isEmpty is true for values encoding/json writes for unset fields: {} and [].
func isEmpty(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	case nil:
		return true
	}
	return false
}
