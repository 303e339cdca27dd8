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
		checkRepeated(t, b)
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

// checkRepeated holds RepeatedKey to a walk of encoding/json's tokens,
// names compared exactly, on input without escapes (which the two
// libraries unescape alike only where the escape is valid UTF-16).
func checkRepeated(t *testing.T, b []byte) {
	d, err := ValidIndexed(b, nil)
	if err != nil || bytes.IndexByte(b, '\\') >= 0 {
		return
	}
	name, _, found := d.RepeatedKey()
	want, wantFound := firstRepeated(json.NewDecoder(bytes.NewReader(b)))
	if found != wantFound || name != want {
		t.Fatalf("%q: RepeatedKey() = %q (%v), encoding/json's tokens say %q (%v)", b, name, found, want, wantFound)
	}
}

// firstRepeated reads one value from dec and returns the first repeated
// name of an object in it, objects in the order they open.
func firstRepeated(dec *json.Decoder) (string, bool) {
	type level struct {
		object bool
		names  map[string]bool
		key    bool // the next token in this object is a key
	}
	var stack []*level
	var found []string // in the order their objects open
	var order []*level
	first := map[*level]string{}
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if s, ok := tok.(string); ok {
				if top.names[s] {
					if _, done := first[top]; !done {
						first[top] = s
					}
				}
				top.names[s] = true
				top.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			l := &level{object: true, names: map[string]bool{}, key: true}
			stack = append(stack, l)
			order = append(order, l)
			continue
		case json.Delim('['):
			l := &level{}
			stack = append(stack, l)
			order = append(order, l)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			break
		}
		if l := stack[len(stack)-1]; l.object {
			l.key = true
		}
	}
	for _, l := range order {
		if s, ok := first[l]; ok {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return "", false
	}
	return found[0], true
}
