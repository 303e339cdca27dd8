package fastpath

import (
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// TestRuneIndexAsCEL: runeIndex and the direct substring are cel-go's
// strings extension's indexOf, lastIndexOf and substring on strings with
// multi-byte and invalid UTF-8, empty strings and overlaps.
func TestRuneIndexAsCEL(t *testing.T) {
	env, err := cel.NewEnv(ext.Strings(), cel.Variable("a", cel.StringType), cel.Variable("b", cel.StringType), cel.Variable("n", cel.IntType))
	if err != nil {
		t.Fatal(err)
	}
	prog := func(expr string) cel.Program {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			t.Fatal(iss.Err())
		}
		p, err := env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	indexOf, lastIndexOf, substring := prog("a.indexOf(b)"), prog("a.lastIndexOf(b)"), prog("a.substring(n)")
	strs := []string{"", "a", "aa", "aaa", "ab", "ba", "abab", "image:tag", "reg/x:1", "/", ":", "é", "aé", "éa", "éé", "\xff", "a\xff", "\xffa", "\ufffd", "a\ufffd", "日本語", "本", "語x"}
	for _, a := range strs {
		for _, b := range strs {
			for name, p := range map[string]cel.Program{"indexOf": indexOf, "lastIndexOf": lastIndexOf} {
				out, _, err := p.Eval(map[string]any{"a": a, "b": b})
				if err != nil {
					t.Fatalf("%q.%s(%q): %v", a, name, b, err)
				}
				if got := runeIndex(a, b, name == "lastIndexOf"); got != out.Value().(int64) {
					t.Errorf("%q.%s(%q) = %d, cel-go %d", a, name, b, got, out.Value())
				}
			}
		}
		for n := int64(-1); n <= 4; n++ {
			out, _, err := substring.Eval(map[string]any{"a": a, "n": n})
			got, ok := directSubstring(dval{k: dString, s: a}, dval{k: dInt, i: n})
			if ok != (err == nil) || ok && got.s != out.Value().(string) {
				t.Errorf("%q.substring(%d) = %q, %v; cel-go %v, %v", a, n, got.s, ok, out, err)
			}
		}
	}
}
