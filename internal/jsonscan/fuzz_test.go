package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzScan: on any input the scan neither panics nor reads out of bounds;
// on valid JSON every member and element it returns is valid JSON, an
// object's members are those encoding/json sees (when no name repeats),
// and an Index reads what the scan reads (checkIndex).
func FuzzScan(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":{"c":[1,"]}"]},"d":"\""}`, `[1,[2,{"a":3}],"x"]`, `{"a"`, `{"a":`, `[`, `{"\u0061":1}`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := Members(b, "a", "b", "d")
		_ = OpenMembers(b, "a", "b")
		els := Elements(b)
		_, _ = TypeOf(b), String(b)
		if !json.Valid(b) {
			return
		}
		for _, v := range append(m, els...) {
			if v != nil && !json.Valid(v) {
				t.Fatalf("%q: a value %q is not valid JSON", b, v)
			}
		}
		checkIndex(t, b)
		var obj map[string]json.RawMessage
		if json.Unmarshal(b, &obj) != nil || repeats(b) {
			return
		}
		for i, k := range []string{"a", "b", "d"} {
			want, ok := obj[k]
			if ok != (m[i] != nil) || (ok && !same(want, m[i])) {
				t.Fatalf("%q: member %q = %q, encoding/json says %q (present %v)", b, k, m[i], want, ok)
			}
		}
	})
}

// repeats tells whether a top-level name appears twice (encoding/json keeps
// the last, case-insensitively; the scan the first, exactly).
func repeats(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		k, _ := tok.(string)
		lower := strings.ToLower(k)
		if seen[lower] {
			return true
		}
		seen[lower] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return true
		}
	}
	return false
}

func same(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
