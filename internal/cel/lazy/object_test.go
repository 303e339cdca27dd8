package lazy

import (
	"reflect"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// TestObjectFromJSONMatchesApimachinery checks the fast decoder gives the
// same values as the apiserver's own unstructured decoding.
func TestObjectFromJSONMatchesApimachinery(t *testing.T) {
	docs := []string{
		`{"a":1,"b":1.5,"c":1e3,"d":-7,"e":9223372036854775807,"f":1.0,"g":"x\u00e9\n","h":[1,"2",null,true,false,{"i":[]}],"j":{},"k":null}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}]}]}}`,
		// Past fastjson's depth (300 values, the leaf counted), to
		// encoding/json's and the apiserver's 10,000 objects and arrays.
		nest(299), nest(300), nest(10000),
	}
	for _, d := range docs {
		got, err := ObjectFromJSON([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := utiljson.Unmarshal([]byte(d), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Object, want) {
			t.Errorf("got  %#v\nwant %#v", got.Object, want)
		}
	}
	for _, bad := range []string{`[1]`, `{`, `"s"`, nest(10001), "[" + nest(300) + "]"} {
		if _, err := ObjectFromJSON([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// nest is an object of levels objects and arrays nested (it counted), the
// innermost holding a number and a string with escapes.
func nest(levels int) string {
	var b strings.Builder
	for i := 1; i < levels-1; i++ {
		if i%2 == 0 {
			b.WriteString(`{"k\u00e9":1.5,"a":`)
		} else {
			b.WriteString(`[7,`)
		}
	}
	b.WriteString(`{"n":9007199254740993,"s":"\ud83d\ude00"}`)
	for i := levels - 2; i >= 1; i-- {
		if i%2 == 0 {
			b.WriteString(`}`)
		} else {
			b.WriteString(`]`)
		}
	}
	return `{"x":` + b.String() + `}`
}
