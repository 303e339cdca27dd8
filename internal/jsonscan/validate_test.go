package jsonscan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

// TestValidAsEncodingJSON holds valid to encoding/json's Valid on edge
// cases of the grammar and on every JSON file of the repository's test
// data, whole and cut short at every byte of its first 2 KB.
func TestValidAsEncodingJSON(t *testing.T) {
	cases := []string{
		``, ` `, `0`, `-0`, `-`, `01`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-05`, `1e`, `1e+`, `-1.5e3`, `+1`, `1 2`,
		`"a"`, `"`, `"\"`, `"\u00e9"`, `"\u00g9"`, `"\u00e"`, `"\u00eZ"`, `"\uZ0e9"`, `"\u0Ze9"`, `"\uABCD"`, `"\ud800"`, `"\x"`, `"\/"`, "\"\x1f\"", "\"\x7f\"", "\"\xff\xfe\"",
		`true`, `tru`, `truee`, `false`, `null`, `nul`, `NaN`, `Infinity`,
		`{}`, `{ }`, `{"a":1}`, `{"a":1,}`, `{"a" : 1 , "b":[1,2]}`, `{"a":1,"a":2}`, `{a:1}`, `{"a"}`, `{"a":}`, `{,}`, `{"a":1}}`,
		`[]`, `[ ]`, `[1,]`, `[,1]`, `[1 2]`, `[[[]]]`, `[[]`, `[]]`, `[}`, `{]`, `[{"a":[{}]}]`,
		" \t\r\n{\"a\":\t[ 1 ,\n2 ] }\r\n", "{\"a\":1}\v", "\u00a0{}",
		strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting),
		strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1),
		strings.Repeat(`{"":`, maxNesting) + `""` + strings.Repeat("}", maxNesting),
		strings.Repeat(`{"":`, maxNesting+1) + `""` + strings.Repeat("}", maxNesting+1),
		strings.Repeat("[", 130) + strings.Repeat("]", 129) + ",1]",
		"\"" + strings.Repeat("abcdefg\\\"", 9) + "\"", "\"" + strings.Repeat("x", 15) + "\x01\"",
	}
	files, err := filepath.Glob("../*/testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no JSON test data found")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, string(b))
		for n := range min(len(b), 2048) {
			cases = append(cases, string(b[:n]))
		}
	}
	for _, c := range cases {
		if got, want := valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("valid(%.80q) = %v, encoding/json says %v", c, got, want)
		}
		checkValidIndexed(t, []byte(c))
	}
}

// checkValidIndexed: ValidIndexed answers as Valid, and its index is
// NewIndex's.
func checkValidIndexed(t *testing.T, b []byte) {
	t.Helper()
	doc, err := ValidIndexed(b, nil)
	if want := Valid(b); (err == nil) != (want == nil) || err != nil && err.Error() != want.Error() {
		t.Fatalf("ValidIndexed(%.80q): %v, Valid: %v", b, err, want)
	}
	if err != nil {
		return
	}
	got, want := doc.Index(), NewIndex(b, "")
	if !slices.Equal(got.starts, want.starts) || !slices.Equal(got.ends, want.ends) || got.depth != want.depth {
		t.Fatalf("ValidIndexed(%.80q): index %v %v depth %d, NewIndex's %v %v depth %d",
			b, got.starts, got.ends, got.depth, want.starts, want.ends, want.depth)
	}
	if TypeOf(b) != fastjson.TypeObject {
		return
	}
	checkSizing(t, b)
	keys := []string{"no such member"}
	for k := range want.Members(b, doc.Root().Start) {
		keys = append(keys, String(k))
	}
	spans := doc.Members(doc.Root(), keys...)
	for i, raw := range Members(b, keys...) {
		if !bytes.Equal(doc.Bytes(spans[i]), raw) || (raw == nil) != (doc.Bytes(spans[i]) == nil) {
			t.Fatalf("Indexed.Members(%.80q, %q) = %q, Members: %q", b, keys[i], doc.Bytes(spans[i]), raw)
		}
		// One level down: the members and elements of each value.
		v := doc.Bytes(spans[i])
		sub := []string{"no such member"}
		for k := range want.Members(b, spans[i].Start) {
			sub = append(sub, String(k))
		}
		if got, want := doc.MembersOf(v, sub...), Members(v, sub...); !slices.EqualFunc(got, want, sameSlice) {
			t.Fatalf("Indexed.MembersOf(%.80q, %q) = %q, Members: %q", v, sub, got, want)
		}
		if got, want := doc.ElementsOf(v), Elements(v); !slices.EqualFunc(got, want, sameSlice) || (got == nil) != (want == nil) {
			t.Fatalf("Indexed.ElementsOf(%.80q) = %q, Elements: %q", v, got, want)
		}
	}
}

func sameSlice(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }

// FuzzValid: valid and encoding/json's Valid agree on any input.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,"x\u00e9\n",true,false,null,{}]}`, `[[]`, "\"\x01\"", `{"a":01}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := valid(b), json.Valid(b); got != want {
			t.Fatalf("valid(%q) = %v, encoding/json says %v", b, got, want)
		}
		checkValidIndexed(t, b)
	})
}

// reviewSizing is the sizing of a review's objects.
var reviewSizing = &Sizing{Paths: [][]string{{"request", "object"}, {"request", "oldObject"}}, Apart: "metadata"}

// checkSizing: the sizes ValidIndexed reads of b, an object, as a review's
// object (and in places that are not one) are NewIndex's sizes of b, and
// those of a review are the largest of its objects' (every value of a
// repeated name counted).
func checkSizing(t *testing.T, b []byte) {
	t.Helper()
	want, _ := NewIndex(b, "metadata").Sizes()
	wrapped := []byte(`{"object":{},"request":{"x":{"object":` + string(b) + `},"object":` + string(b) + `,"y":[` + string(b) + `],"oldObject":{}}}`)
	doc, err := ValidIndexed(wrapped, reviewSizing)
	if err != nil {
		return // nested too deep once wrapped
	}
	if got, ok := doc.Sizes(); !ok || got != want {
		t.Fatalf("sizes of %.80q as a review's object: %+v (%v), NewIndex's %+v", b, got, ok, want)
	}
	// b as the review: its own objects.
	var ref Sizes
	x := NewIndex(b, "")
	for k, v := range x.Members(b, skipSpace(b, 0)) {
		if !keyIs(k, "request") || b[v.Start] != '{' {
			continue
		}
		for k, o := range x.Members(b, v.Start) {
			if (keyIs(k, "object") || keyIs(k, "oldObject")) && b[o.Start] == '{' {
				s, _ := NewIndex(b[o.Start:o.End], "metadata").Sizes()
				ref = Sizes{max(ref.Entries, s.Entries), max(ref.Strings, s.Strings), max(ref.Apart, s.Apart)}
			}
		}
	}
	doc, err = ValidIndexed(b, reviewSizing)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := doc.Sizes(); got != ref {
		t.Fatalf("sizes of the objects of %.80q: %+v, NewIndex's %+v", b, got, ref)
	}
}
