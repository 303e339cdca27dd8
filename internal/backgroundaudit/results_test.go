package backgroundaudit

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
)

func finding(ns, name string, outcome engine.Outcome, exception string) offline.Finding {
	return offline.Finding{
		Object:  &manifest.Object{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespace: ns, Name: name},
		Results: []engine.Result{{Policy: "p", Outcome: outcome, Exception: exception}},
	}
}

// TestResults runs steps against one store: whether each changes its
// namespace's report, and what the namespaces hold after.
func TestResults(t *testing.T) {
	r := newResults()
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ka, kb, kc := objectKey(cm, "a/one"), objectKey(cm, "a/two"), objectKey(cm, "b/one")
	steps := []struct {
		name    string
		do      func() bool
		want    bool
		a, b    []string // names held in a and b after
		exempts []string
	}{
		{"first result", func() bool { return r.set(ka, entry{"a", "u1", finding("a", "one", engine.Fail, "")}) }, true, []string{"one"}, nil, nil},
		{"same again: no write", func() bool { return r.set(ka, entry{"a", "u1", finding("a", "one", engine.Fail, "")}) }, false, []string{"one"}, nil, nil},
		{"recreated (new uid)", func() bool { return r.set(ka, entry{"a", "u2", finding("a", "one", engine.Fail, "")}) }, true, []string{"one"}, nil, nil},
		{"fixed", func() bool { return r.set(ka, entry{"a", "u2", finding("a", "one", engine.Pass, "")}) }, true, []string{"one"}, nil, nil},
		{"second object, sorted", func() bool { return r.set(kb, entry{"a", "u3", finding("a", "two", engine.Skip, "x")}) }, true, []string{"one", "two"}, nil, []string{kb}},
		{"other namespace", func() bool { return r.set(kc, entry{"b", "u4", finding("b", "one", engine.Fail, "")}) }, true, []string{"one", "two"}, []string{"one"}, []string{kb}},
		{"deleted", func() bool { ns, ok := r.remove(kb); return ok && ns == "a" }, true, []string{"one"}, []string{"one"}, nil},
		{"deleted twice", func() bool { _, ok := r.remove(kb); return ok }, false, []string{"one"}, []string{"one"}, nil},
		{"last of b", func() bool { ns, ok := r.remove(kc); return ok && ns == "b" }, true, []string{"one"}, nil, nil},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Errorf("%s: %v, want %v", s.name, got, s.want)
		}
		for ns, want := range map[string][]string{"a": s.a, "b": s.b} {
			var got []string
			for _, f := range r.findings(ns) {
				got = append(got, f.Object.Name)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: namespace %s holds %v, want %v", s.name, ns, got, want)
			}
			if r.has(ns) != (len(want) > 0) {
				t.Errorf("%s: has(%s) = %v", s.name, ns, r.has(ns))
			}
		}
		if got := r.exemptedBy(map[string]bool{"x": true}); !slices.Equal(got, s.exempts) {
			t.Errorf("%s: exempted by x: %v, want %v", s.name, got, s.exempts)
		}
	}
	if c := r.counts(); c[engine.Pass] != 1 || len(c) != 1 {
		t.Errorf("counts = %v, want 1 pass", c)
	}
}

func TestObjectKey(t *testing.T) {
	tests := []struct {
		gvr schema.GroupVersionResource
		key string
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "ns/p"},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "ns/d"},
		{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "ns"},
	}
	for _, tt := range tests {
		gvr, key, err := splitKey(objectKey(tt.gvr, tt.key))
		if err != nil || gvr != tt.gvr || key != tt.key {
			t.Errorf("splitKey(objectKey(%v, %q)) = %v, %q, %v", tt.gvr, tt.key, gvr, key, err)
		}
	}
	if _, _, err := splitKey("nonsense"); err == nil {
		t.Error("splitKey(nonsense): no error")
	}
}
