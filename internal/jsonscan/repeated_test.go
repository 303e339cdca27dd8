package jsonscan

import "testing"

func TestRepeatedKey(t *testing.T) {
	for _, c := range []struct {
		doc  string
		name string // "" for none
		at   int
	}{
		{doc: `{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`},
		{doc: `[{"a":1},{"a":1}]`},
		{doc: `"spec"`},
		{doc: `{"spec":{"x":1},"spec":{"y":2}}`, name: "spec", at: 23},
		{doc: `{"a":{"b":1,"c":{"d":1,"d":2}}}`, name: "d", at: 27},
		{doc: `{"a":[{"n":1},{"n":1,"m":{},"n":2}]}`, name: "n", at: 32},
		// Escapes: the names compared are the unescaped strings.
		{doc: `{"spec":1,"\u0073pec":2}`, name: "spec", at: 22},
		{doc: `{"a\"":1,"a\u0022":2}`, name: `a"`, at: 19},
		{doc: `{"A":1,"a":2}`}, // case matters, as in the apiserver's decoder
		// Bytes that are not UTF-8 read as U+FFFD, one each, as the
		// apiserver's decoder reads them (FuzzScan's finding).
		{doc: "{\"\xf2\":1,\"\x83\":2}", name: "\ufffd", at: 11},
		{doc: "{\"\xf2\x83\":1,\"\xff\":2}"},
		{doc: "{\"a\xff\":1,\"a\ufffd\":2}", name: "a\ufffd", at: 15},
		// A nested object between two members is skipped whole.
		{doc: `{"k":{"k":{"k":1}},"j":[[{"k":1}]],"k":0}`, name: "k", at: 39},
	} {
		d, err := ValidIndexed([]byte(c.doc), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		name, at, found := d.RepeatedKey()
		if found != (c.name != "") || name != c.name || (found && at != c.at) {
			t.Errorf("%s: RepeatedKey() = %q at %d (%v), want %q at %d", c.doc, name, at, found, c.name, c.at)
		}
	}
}
