package jsonscan

import "testing"

func TestUnescape(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`"plain"`, "plain"},
		{`""`, ""},
		{`"a\"b\\c\/d"`, `a"b\c/d`},
		{`"tab\tnewline\n"`, "tab\tnewline\n"},
		{`"\u00e9t\u00e9 \ud83d\ude00"`, "été 😀"},
		{`42`, ""},
		{`{"a":"b"}`, ""},
		{``, ""},
	} {
		if got := Unescape([]byte(tt.in)); got != tt.want {
			t.Errorf("Unescape(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
