package jsonscan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	x := NewIndex(b)
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
