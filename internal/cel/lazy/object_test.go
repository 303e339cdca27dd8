package lazy

import (
	"reflect"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// TestObjectFromJSONMatchesApimachinery checks the fast decoder gives the
// same values as the apiserver's own unstructured decoding.
func TestObjectFromJSONMatchesApimachinery(t *testing.T) {
	docs := []string{
		`{"a":1,"b":1.5,"c":1e3,"d":-7,"e":9223372036854775807,"f":1.0,"g":"x\u00e9\n","h":[1,"2",null,true,false,{"i":[]}],"j":{},"k":null}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}]}]}}`,
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
	for _, bad := range []string{`[1]`, `{`, `"s"`} {
		if _, err := ObjectFromJSON([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
