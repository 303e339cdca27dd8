package jsonscan

import (
	"slices"
	"strings"
	"testing"
)

func TestBytesOf(t *testing.T) {
	doc, err := ValidIndexed([]byte(`{"a": [1, {"b": 2}], "c": "d"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		keys []string
		want []string // "<nil>" for absent
	}{
		{[]string{"a", "c"}, []string{`[1, {"b": 2}]`, `"d"`}},
		{[]string{"missing", "c"}, []string{"<nil>", `"d"`}},
		{nil, []string{}},
	} {
		got := doc.BytesOf(doc.Members(doc.Root(), tt.keys...))
		shown := make([]string, len(got))
		for i, b := range got {
			if shown[i] = string(b); b == nil {
				shown[i] = "<nil>"
			}
		}
		if !slices.Equal(shown, tt.want) {
			t.Errorf("BytesOf(Members(%q)) = %q, want %q", tt.keys, shown, tt.want)
		}
	}
}

// TestValidIndexedBelow: levels more objects and arrays may nest than
// Valid accepts, no more; the error past them is encoding/json's.
func TestValidIndexedBelow(t *testing.T) {
	for _, tt := range []struct {
		levels, nested int
		ok             bool
	}{
		{0, maxNesting, true}, {0, maxNesting + 1, false},
		{2, maxNesting + 2, true}, {2, maxNesting + 3, false},
	} {
		b := []byte(strings.Repeat(`{"a":[`, tt.nested/2) + strings.Repeat("[", tt.nested%2) + strings.Repeat("]", tt.nested%2) + strings.Repeat(`]}`, tt.nested/2))
		d, err := ValidIndexedBelow(b, nil, tt.levels)
		if (err == nil) != tt.ok {
			t.Errorf("%d levels below, %d nested: error %v, want ok %v", tt.levels, tt.nested, err, tt.ok)
		}
		if err == nil && d.Index().Depth() != tt.nested {
			t.Errorf("%d levels below, %d nested: depth %d", tt.levels, tt.nested, d.Index().Depth())
		}
		if err != nil && !strings.Contains(err.Error(), "exceeded max depth") {
			t.Errorf("%d levels below, %d nested: error %v, want encoding/json's", tt.levels, tt.nested, err)
		}
	}
}
