package references

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Use makes the store keep exactly these declarations, as a reloaded
// policy set declares them: a view no declaration shares any more is
// dropped, a kind no declaration names is dropped with its objects (its
// source stops, Kinds), new declarations are registered (Register). A kind
// still declared keeps its objects and whether it is complete, unless its
// declarations now keep fields its objects were held without: then it is
// made again, empty and not listed, for its source to list it again
// (Generation).
func (s *Store) Use(cs []*Compiled) {
	want := map[schema.GroupVersionKind]map[string]bool{}
	fields := map[schema.GroupVersionKind]*fieldNode{}
	for _, c := range cs {
		if want[c.GVK] == nil {
			want[c.GVK] = map[string]bool{}
			fields[c.GVK] = c.fields
		} else {
			fields[c.GVK] = union(fields[c.GVK], c.fields)
		}
		want[c.GVK][c.id] = true
	}
	s.mu.Lock()
	for gvk, k := range s.kinds {
		if want[gvk] == nil || !k.fields.covers(fields[gvk]) {
			delete(s.kinds, gvk)
			continue
		}
		k.fields, k.declared = nil, false // Register sets them again
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

// Generation tells a kind's state from the one before it: it changes
// when Use makes the kind again, and a source then lists it again. Zero
// for a kind not declared.
func (s *Store) Generation(gvk schema.GroupVersionKind) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if k := s.kinds[gvk]; k != nil {
		return k.generation
	}
	return 0
}

// Project is what the store keeps of an object of kind gvk (Trim, then
// the fields its declarations keep): what a source may hold of it.
func (s *Store) Project(gvk schema.GroupVersionKind, obj map[string]any) map[string]any {
	s.mu.RLock()
	var fields *fieldNode
	if k := s.kinds[gvk]; k != nil {
		fields = k.fields
	}
	s.mu.RUnlock()
	return project(gvk, obj, fields)
}

// OnChange has f called with the kind whenever an object of a declared
// kind is added, changed or deleted, or the kind becomes complete (after
// the store holds the change), until remove is called: a verdict that
// reads the kind may have changed with it.
func (s *Store) OnChange(f func(schema.GroupVersionKind)) (remove func()) {
	return s.changes.Add(f)
}
