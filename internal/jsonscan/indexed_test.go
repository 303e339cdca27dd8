package jsonscan

import (
	"slices"
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
