package backgroundaudit

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
)

// TestCompact: a finding kept compact gives back what a report reads of
// it, and two findings compare as their reports would.
func TestCompact(t *testing.T) {
	pod := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	f := func(name string, err error, results ...engine.Result) offline.Finding {
		return offline.Finding{Object: &manifest.Object{GVK: pod, Namespace: "a", Name: name, JSON: []byte(`{"spec":{}}`)},
			Results: results, Err: err, Warnings: []string{"dropped"}, Defaulted: []byte(`{"dropped":true}`)}
	}
	pass := engine.Result{Policy: "p", Outcome: engine.Pass}
	fail := engine.Result{Policy: "q", Outcome: engine.Fail, Message: "no", Binding: "b", Origin: "cluster"}
	for _, c := range []struct {
		name string
		a, b offline.Finding
		same bool
	}{
		{"equal", f("web", nil, pass, fail), f("web", nil, pass, fail), true},
		{"other name", f("web", nil, pass), f("db", nil, pass), false},
		{"other outcome", f("web", nil, pass), f("web", nil, engine.Result{Policy: "p", Outcome: engine.Fail}), false},
		{"other message", f("web", nil, fail), f("web", nil, engine.Result{Policy: "q", Outcome: engine.Fail, Message: "No", Binding: "b", Origin: "cluster"}), false},
		{"other order", f("web", nil, pass, fail), f("web", nil, fail, pass), false},
		{"one result more", f("web", nil, pass), f("web", nil, pass, fail), false},
		{"error", f("web", errors.New("x")), f("web", nil), false},
		{"same error", f("web", errors.New("x")), f("web", errors.New("x")), true},
	} {
		a, b := compactOf(c.a), compactOf(c.b)
		if got := a.same(b); got != c.same {
			t.Errorf("%s: same = %v, want %v", c.name, got, c.same)
		}
		back := a.finding("a", "u-1")
		want := offline.Finding{Object: &manifest.Object{GVK: pod, Namespace: "a", Name: c.a.Object.Name, JSON: []byte(`{"metadata":{"uid":"u-1"}}`)},
			Results: c.a.Results, Err: c.a.Err, Allowed: !slices.ContainsFunc(c.a.Results, func(r engine.Result) bool { return r.Outcome == engine.Fail })}
		if !reflect.DeepEqual(back, want) {
			t.Errorf("%s: back %+v %+v, want %+v %+v", c.name, back, back.Object, want, want.Object)
		}
	}
	// One copy of a result shared by the objects that have it.
	x, y := compactOf(f("web", nil, fail)), compactOf(f("db", nil, fail))
	if x.results[0] != y.results[0] {
		t.Error("the same result is held twice")
	}
}
