package lazy

import (
	"reflect"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// knownKeys are the member names of the common Kubernetes objects (their
// fields' JSON names, as such and as managedFields writes them, "f:name"),
// built once, so that converting an object allocates no string for a key
// it has (ObjectFromJSON): most of a Pod's 500-odd keys are such.
var knownKeys = sync.OnceValue(func() map[string]string {
	keys := map[string]string{".": "."}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				keys[name] = name
				keys["f:"+name] = "f:" + name
			}
			walk(f.Type)
		}
	}
	for _, o := range []any{corev1.Pod{}, appsv1.Deployment{}, appsv1.StatefulSet{}, appsv1.DaemonSet{}, batchv1.CronJob{},
		corev1.Service{}, corev1.ConfigMap{}, corev1.Secret{}, corev1.Namespace{}} {
		walk(reflect.TypeOf(o))
	}
	return keys
})

// key is k as a string, without allocating when it is a known key.
func key(known map[string]string, k []byte) string {
	if s, ok := known[string(k)]; ok {
		return s
	}
	return string(k)
}
