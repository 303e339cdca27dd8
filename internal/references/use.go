package references

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Use makes the store keep exactly these declarations, as a reloaded
// policy set declares them: a view no declaration shares any more is
// dropped, a kind no declaration names is dropped with its objects (its
// source stops, Kinds), new declarations are registered (Register). A kind
// still declared keeps its objects and whether it is complete.
func (s *Store) Use(cs []*Compiled) {
	want := map[schema.GroupVersionKind]map[string]bool{}
	for _, c := range cs {
		if want[c.GVK] == nil {
			want[c.GVK] = map[string]bool{}
		}
		want[c.GVK][c.id] = true
	}
	s.mu.Lock()
	for gvk, k := range s.kinds {
		if want[gvk] == nil {
			delete(s.kinds, gvk)
			continue
		}
		for id := range k.views {
			if !want[gvk][id] {
				delete(k.views, id)
			}
		}
	}
	s.mu.Unlock()
	for _, c := range cs {
		s.Register(c)
	}
}

// OnChange has f called with the kind whenever an object of a declared
// kind is added, changed or deleted, or the kind becomes complete (after
// the store holds the change), until remove is called: a verdict that
// reads the kind may have changed with it.
func (s *Store) OnChange(f func(schema.GroupVersionKind)) (remove func()) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if s.onChange == nil {
		s.onChange = map[int]func(schema.GroupVersionKind){}
	}
	s.subscribers++
	id := s.subscribers
	s.onChange[id] = f
	return func() {
		s.subMu.Lock()
		defer s.subMu.Unlock()
		delete(s.onChange, id)
	}
}

// notify tells OnChange's subscribers of a change of kind gvk; called
// without s.mu held.
func (s *Store) notify(gvk schema.GroupVersionKind) {
	s.subMu.Lock()
	fs := slices.Collect(maps.Values(s.onChange))
	s.subMu.Unlock()
	for _, f := range fs {
		f(gvk)
	}
}
