package jsonscan

import (
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

// TestDepth: an index's Depth is where fastjson's nesting limit falls, on
// either side of it, and the depth of small documents.
func TestDepth(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want int
	}{
		{`1`, 1}, {`"[{"`, 1}, {`[]`, 1}, {`{}`, 1}, {` [ ] `, 1}, {`[1]`, 2}, {`[[]]`, 2}, {`[[1]]`, 3},
		{`{"a":{}}`, 2}, {`{"a":{"b":[ ]},"c":"}}{{"}`, 3}, {`{"a\"{":[{"b":null}]}`, 4}, {`[[],[[1]],{}]`, 4},
	} {
		if got := NewIndex([]byte(tt.doc), "").Depth(); got != tt.want {
			t.Errorf("Depth(%s) = %d, want %d", tt.doc, got, tt.want)
		}
	}
	var p fastjson.Parser
	for _, n := range []int{fastjson.MaxDepth - 2, fastjson.MaxDepth - 1, fastjson.MaxDepth, fastjson.MaxDepth + 1} {
		for _, inner := range []string{"", "1", `{"a":[]}`} {
			doc := strings.Repeat("[", n) + inner + strings.Repeat("]", n)
			_, err := p.Parse(doc)
			if d := NewIndex([]byte(doc), "").Depth(); (d > fastjson.MaxDepth) != (err != nil) {
				t.Errorf("%d arrays around %q: Depth %d, fastjson error %v", n, inner, d, err)
			}
		}
	}
}
