package admission

import (
	"os"
	"testing"
)

func TestMember(t *testing.T) {
	tests := []struct {
		doc, key, want string
	}{
		{`{"a":1,"b":{"c":[1,"]}",{"d":"\""}]},"e":null}`, "b", `{"c":[1,"]}",{"d":"\""}]}`},
		{`{"a":1,"b":2}`, "a", `1`},
		{` { "a" : "x\"y" , "b" : true } `, "a", `"x\"y"`},
		{` { "a" : "x" , "b" : true } `, "b", `true`},
		{`{"a":-1.5e3}`, "a", `-1.5e3`},
		{`{"a":{"b":1},"b":2}`, "b", `2`},  // members of members are not members
		{`{"k":1,"k":2}`, "k", `1`},        // the first, as fastjson's Get
		{`{"\u006b":[],"k":2}`, "k", `2`},  // a key written as is first, as fastjson's Get
		{`{"\u006b":[],"j":2}`, "k", `[]`}, // then escaped keys, unescaped
		{`{"k\\":1,"k":2}`, "k", `2`},      // an escaped backslash is not the key
		{`{"a":1}`, "b", ``},               // absent
		{`[{"a":1}]`, "a", ``},             // not an object
		{`{}`, "a", ``},                    // empty
		{`{"a":[[[[[[[[[[]]]]]]]]]],"b":3}`, "b", `3`},
	}
	for _, tt := range tests {
		if got := string(member([]byte(tt.doc), tt.key)); got != tt.want {
			t.Errorf("member(%s, %q) = %q, want %q", tt.doc, tt.key, got, tt.want)
		}
	}
}

func BenchmarkMembers(b *testing.B) {
	body, err := os.ReadFile("testdata/review-pod-create.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req := member(body, "request")
		if m := members(req, "object", "oldObject"); m[0] == nil {
			b.Fatal("no object")
		}
	}
}
