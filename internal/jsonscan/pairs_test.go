package jsonscan

import (
	"strings"
	"testing"
)

func TestPairs(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // key=value, raw
	}{
		{"object", ` { "a" : 1 , "b":{"c":[1,"}"]}, "a":"x\"y" } trailing`, []string{`"a"=1`, `"b"={"c":[1,"}"]}`, `"a"="x\"y"`}},
		{"empty", `{}`, nil},
		{"escaped key", `{"k\u0065y":null}`, []string{`"k\u0065y"=null`}},
		{"not an object", `["a",1]`, nil},
		{"nothing", ``, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for k, v := range Pairs([]byte(tc.in)) {
				got = append(got, string(k)+"="+string(v))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPairsStops(t *testing.T) {
	n := 0
	for range Pairs([]byte(`{"a":1,"b":2,"c":3}`)) {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("yielded %d pairs, want to stop at 2", n)
	}
}

func TestKeyIs(t *testing.T) {
	for _, tc := range []struct {
		quoted, key string
		want        bool
	}{
		{`"tollgate.dev/status"`, "tollgate.dev/status", true},
		{`"tollgate.dev\/status"`, "tollgate.dev/status", true},
		{`"tollgate.dev\u002fstatus"`, "tollgate.dev/status", true},
		{`"tollgate.dev/statuS"`, "tollgate.dev/status", false},
	} {
		if got := KeyIs([]byte(tc.quoted), tc.key); got != tc.want {
			t.Errorf("KeyIs(%s, %q) = %v, want %v", tc.quoted, tc.key, got, tc.want)
		}
	}
}
