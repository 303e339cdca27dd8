package inject

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// referenceAnnotations is how annotations were read before readAnnotations
// skipped all but two of them: parsed whole into a map (the last of a
// repeated name wins). readAnnotations must agree with it on every input.
func referenceAnnotations(raw []byte) (map[string]string, error) {
	var p fastjson.Parser
	v, err := p.ParseBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("cannot read pod: %w", err)
	}
	if v.Type() == fastjson.TypeNull {
		return nil, nil
	}
	o, err := v.Object()
	if err != nil {
		return nil, fmt.Errorf("cannot read pod: metadata.annotations must be an object")
	}
	m := make(map[string]string, o.Len())
	o.Visit(func(k []byte, val *fastjson.Value) {
		s, e := val.StringBytes()
		if e != nil && err == nil {
			err = fmt.Errorf("cannot read pod: metadata.annotations.%s must be a string", k)
		}
		m[string(k)] = string(s)
	})
	return m, err
}

// checkAnnotations compares readAnnotations with the reference on raw, and
// on raw followed by more of the metadata (as an open member gives it).
func checkAnnotations(t *testing.T, raw []byte) {
	t.Helper()
	for _, in := range [][]byte{raw, append(append([]byte(nil), raw...), `, "managedFields": [{"a": "}"}]}`...)} {
		checkAnnotationsIn(t, raw, in)
	}
}

func checkAnnotationsIn(t *testing.T, raw, in []byte) {
	t.Helper()
	want, wantErr := referenceAnnotations(raw)
	var pod Pod
	err := pod.readAnnotations(in)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("%s: error %v, want %v", raw, err, wantErr)
	}
	if err != nil {
		return
	}
	got := pod.Annotations
	if got.Any != (len(want) > 0) || got.Status != want[StatusAnnotation] || got.OptOut != want[OptOutAnnotation] {
		t.Fatalf("%s: read %+v, want %q", raw, got, want)
	}
}

var annotationCases = []string{
	`null`,
	`{}`,
	`{"a":"b"}`,
	`{"tollgate.dev/status":"nginx-sidecar","tollgate.dev/inject":"false"}`,
	`{"tollgate.dev/status":"a","tollgate.dev/status":"b"}`,
	`{"tollgate.dev\/status":"x\u0041,y","tollgate.dev\u002finject":" Off\t"}`,
	`{"tollgate.dev/status":"\ud800 lone","tollgate.dev/inject":"\"q\""}`,
	`{"a":"b","n":1,"o":{}}`,
	`{"k\u00e9":true}`,
	`["tollgate.dev/status"]`,
	`"tollgate.dev/status"`,
	`{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n","tollgate.dev/status":"p"}`,
}

func TestReadAnnotationsAsReference(t *testing.T) {
	for _, c := range annotationCases {
		checkAnnotations(t, []byte(c))
	}
	// and the annotations of every golden Pod
	inputs, err := filepath.Glob(filepath.Join(goldenDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		js := readJSONFile(t, in)
		var p fastjson.Parser
		v, err := p.ParseBytes(js)
		if err != nil {
			t.Fatal(err)
		}
		if a := v.Get("metadata", "annotations"); a != nil {
			checkAnnotations(t, a.MarshalTo(nil))
		}
	}
}

// FuzzAnnotations: for any JSON value tollgate accepts, readAnnotations
// reads what the reference reads, and fails with its error.
func FuzzAnnotations(f *testing.F) {
	for _, c := range annotationCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if jsonscan.Valid(raw) != nil { // what PodFromJSON and admission.Decode accept
			return
		}
		checkAnnotations(t, raw)
	})
}
