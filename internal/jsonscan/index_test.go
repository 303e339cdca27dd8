package jsonscan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

// TestIndex: an index reads the members and elements of every object and
// array as Pairs and Elements do.
func TestIndex(t *testing.T) {
	docs := []string{`1`, `[]`, ` { } `, `{"a":1,"b":{"c":[1,"]}",{}]},"d":"\"","a":[ [ ] , { "x" : null } ]}`, `[1,[2,{"a":3}],"x",[[[]]]]`,
		`{"a\"{":[{"b":null}],"":true}`, "{\n\t\"k\" : [ 1 , 2 ] ,\n\t\"o\" : { \"p\" : { } }\n}"}
	files, _ := filepath.Glob("../admission/testdata/review-*.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	if len(docs) < 10 {
		t.Fatalf("only %d documents", len(docs))
	}
	for _, d := range docs {
		checkIndex(t, []byte(d))
	}
}

// checkIndex requires the index of valid JSON b to read it as the scan
// does: each object's members as Pairs, each array's elements as Elements,
// each object and array ending where skipValue ends it.
func checkIndex(t *testing.T, b []byte) {
	t.Helper()
	x := NewIndex(b, "a")
	for _, apart := range []string{"a", "", "metadata"} {
		got, ok := NewIndex(b, apart).Sizes()
		if want := scanSizes(b, apart); !ok || got != want {
			t.Fatalf("%.80q, apart %q: the index sizes %+v, the scan %+v", b, apart, got, want)
		}
	}
	for k, start := range x.starts {
		i := int(start)
		if end := skipValue(b, i); int(x.ends[k]) != end {
			t.Fatalf("%.80q: the value at %d ends at %d, indexed %d", b, i, end, x.ends[k])
		}
		var got, want []string
		if b[i] == '{' {
			for key, v := range x.Members(b, i) {
				got = append(got, string(key)+"="+string(b[v.Start:v.End]))
			}
			for key, v := range Pairs(b[i:]) {
				want = append(want, string(key)+"="+string(v))
			}
		} else {
			for v := range x.Elements(b, i) {
				got = append(got, string(b[v.Start:v.End]))
			}
			for _, v := range Elements(b[i:]) {
				want = append(want, string(v))
			}
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("%.80q at %d: index reads %q, the scan %q", b, i, got, want)
		}
	}
	if n := bytes.Count(b, []byte("{")) + bytes.Count(b, []byte("[")); len(x.starts) > n {
		t.Fatalf("%.80q: %d indexed, at most %d", b, len(x.starts), n)
	}
}

// scanSizes are the sizes of valid JSON b read level by level with Pairs
// and Elements: every object's members and array's elements counted,
// every string's and key's bytes between quotes, those in the value of the
// top-level member apart apart.
func scanSizes(b []byte, apart string) Sizes {
	var sz Sizes
	var walk func(v []byte, in *int)
	str := func(q []byte, in *int) { *in = max(*in, len(q)-2) }
	walk = func(v []byte, in *int) {
		switch v = Value(v); TypeOf(v) {
		case fastjson.TypeObject:
			n := 0
			for k, e := range Pairs(v) {
				n++
				str(k, in)
				walk(e, in)
			}
			sz.Entries = max(sz.Entries, n)
		case fastjson.TypeArray:
			els := Elements(v)
			sz.Entries = max(sz.Entries, len(els))
			for _, e := range els {
				walk(e, in)
			}
		case fastjson.TypeString:
			str(v, in)
		}
	}
	v := Value(b)
	if TypeOf(v) != fastjson.TypeObject {
		walk(v, &sz.Strings)
		return sz
	}
	n := 0
	for k, e := range Pairs(v) {
		n++
		str(k, &sz.Strings)
		if apart != "" && KeyIs(k, apart) {
			walk(e, &sz.Apart)
		} else {
			walk(e, &sz.Strings)
		}
	}
	sz.Entries = max(sz.Entries, n)
	return sz
}
