package jsonscan

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
		{`{"k":1,"k":2}`, "k", `1`},        // the first
		{`{"\u006b":[],"k":2}`, "k", `[]`}, // keys compared unescaped
		{`{"k\\":1,"k":2}`, "k", `2`},      // an escaped backslash is not the key
		{`{"a":1}`, "b", ``},               // absent
		{`[{"a":1}]`, "a", ``},             // not an object
		{`{}`, "a", ``},                    // empty
		{`{"a":[[[[[[[[[[]]]]]]]]]],"b":3}`, "b", `3`},
	}
	for _, tt := range tests {
		if got := string(Member([]byte(tt.doc), tt.key)); got != tt.want {
			t.Errorf("Member(%s, %q) = %q, want %q", tt.doc, tt.key, got, tt.want)
		}
	}
}

func TestOpenMembers(t *testing.T) {
	doc := []byte(`{"a":1,"r":{"x":[1,{"y":2}]},"b":"z"}`)
	got := OpenMembers(doc, "r", "b")
	if string(got[0]) != `{"x":[1,{"y":2}]}` || string(got[1]) != `"z"}` {
		t.Errorf("r, found before the last key, is bounded; b runs to the end: %q", got)
	}
	got = OpenMembers(doc, "a", "r")
	if string(got[0]) != "1" || string(got[1]) != `{"x":[1,{"y":2}]},"b":"z"}` {
		t.Errorf("the last key found runs to the end: %q", got)
	}
	if x := Member(got[1], "x"); string(x) != `[1,{"y":2}]` {
		t.Errorf("members of an open value: %q", x)
	}
	if got := OpenMembers(doc, "a", "missing"); string(got[0]) != "1" || got[1] != nil {
		t.Errorf("a missing key: %q", got)
	}
}

func BenchmarkMembers(b *testing.B) {
	body, err := os.ReadFile("../admission/testdata/review-pod-create.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req := Member(body, "request")
		if m := Members(req, "object", "oldObject"); m[0] == nil {
			b.Fatal("no object")
		}
	}
}

func TestElements(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want []string
	}{
		{`[1, "a,]", {"b":[2,3]} ,[],null]`, []string{`1`, `"a,]"`, `{"b":[2,3]}`, `[]`, `null`}},
		{` [ ] `, []string{}},
		{`{"a":1}`, nil},
	} {
		got := Elements([]byte(tt.doc))
		if (got == nil) != (tt.want == nil) || len(got) != len(tt.want) {
			t.Errorf("Elements(%s) = %q, want %q", tt.doc, got, tt.want)
			continue
		}
		for i := range got {
			if string(got[i]) != tt.want[i] {
				t.Errorf("Elements(%s)[%d] = %s, want %s", tt.doc, i, got[i], tt.want[i])
			}
		}
	}
}

func TestTypeAndString(t *testing.T) {
	for doc, want := range map[string]string{`{}`: "object", ` [1]`: "array", `"x"`: "string", `true`: "true", `false`: "false", `null`: "null", `-1`: "number", ``: "null"} {
		if got := TypeOf([]byte(doc)).String(); got != want {
			t.Errorf("TypeOf(%q) = %s, want %s", doc, got, want)
		}
	}
	for doc, want := range map[string]string{`"plain"`: "plain", `"a\"b\u00e9"`: `a"bé`, `1`: "", `{"a":"b"}`: ""} {
		if got := String([]byte(doc)); got != want {
			t.Errorf("String(%s) = %q, want %q", doc, got, want)
		}
	}
}
