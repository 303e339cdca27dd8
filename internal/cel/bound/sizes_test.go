package bound

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
)

// TestNamespaceStats: for a namespace with every field set, one string
// long (300 bytes) or one list or map large (100 entries) at a time, each
// in turn, NamespaceStats bound the sizes of namespaceObject as the
// apiserver makes it (CreateNamespaceObject), walked as JSON.
func TestNamespaceStats(t *testing.T) {
	sites := 0
	for target := 0; target == 0 || target < sites; target++ {
		ns := &corev1.Namespace{}
		f := &filler{target: target}
		f.fill(reflect.ValueOf(ns).Elem())
		sites = f.n
		js, err := json.Marshal(plugincel.CreateNamespaceObject(ns))
		if err != nil {
			t.Fatal(err)
		}
		var exposed any
		if err := json.Unmarshal(js, &exposed); err != nil {
			t.Fatal(err)
		}
		var want Stats
		walkStats(exposed, &want.L, &want.TR)
		if got := NamespaceStats(ns); got.L < want.L || got.TR < want.TR || got.TM != 0 {
			t.Errorf("site %d: NamespaceStats %+v, below namespaceObject's %+v: %.300s", target, got, want, js)
		}
	}
	if sites < 20 {
		t.Fatalf("only %d sites", sites)
	}
}

// filler sets every exported field of a value: the target-th site (a
// string, or a list or map) long, the others short; n counts the sites.
type filler struct{ target, n int }

func (f *filler) site() bool {
	hit := f.n == f.target
	f.n++
	return hit
}

func (f *filler) fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		s := "s"
		if f.site() {
			s = strings.Repeat("x", 300)
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[metav1.Time]() {
			v.Set(reflect.ValueOf(metav1.Now()))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	case reflect.Slice:
		n := 1
		if f.site() {
			n = 100
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		f.fill(s.Index(0))
		for i := 1; i < n; i++ {
			s.Index(i).Set(s.Index(0))
		}
		v.Set(s)
	case reflect.Map:
		n := 1
		if f.site() {
			n = 100
		}
		m := reflect.MakeMapWithSize(v.Type(), n)
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f.fill(k)
		f.fill(e)
		m.SetMapIndex(k, e)
		for i := 1; i < n; i++ {
			m.SetMapIndex(reflect.ValueOf(fmt.Sprint("k", i)).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	}
}
