package references

import (
	"errors"
	"fmt"
	"sort"

	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Self is the object under review: a lookup of its own kind never gives
// its own stored copy (same namespace and name), so that an UPDATE does
// not collide with the object it replaces. A CREATE with only a
// generateName has no name, and nothing stored is it.
type Self struct {
	GroupKind       schema.GroupKind
	Namespace, Name string
}

// ErrNotListed is the error of a lookup of a kind no source has listed in
// full.
var ErrNotListed = errors.New("not listed")

// ErrNoIndex is the error of a lookup by an index the declaration does not
// name (load time refuses the policies that would).
var ErrNoIndex = errors.New("no such index")

// ByKey are the objects the declaration covers whose index has key,
// sorted by namespace and name, self excluded.
func (s *Store) ByKey(c *Compiled, index, key string, self Self) ([]ref.Val, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, err := s.view(c)
	if err != nil {
		return nil, err
	}
	m, ok := v.index[index]
	if !ok {
		return nil, fmt.Errorf("reference %s: index %q: %w (declared: %v)", c.Name, index, ErrNoIndex, c.IndexNames())
	}
	return sorted(m[key], c, self), nil
}

// InNamespace are the objects the declaration covers in a namespace ("" for
// cluster-scoped kinds), sorted by name, self excluded.
func (s *Store) InNamespace(c *Compiled, namespace string, self Self) ([]ref.Val, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, err := s.view(c)
	if err != nil {
		return nil, err
	}
	return sorted(v.byNamespace[namespace], c, self), nil
}

// Get is the object of that namespace and name the declaration covers,
// nil when there is none (or it is self).
func (s *Store) Get(c *Compiled, namespace, name string, self Self) (ref.Val, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, err := s.view(c)
	if err != nil {
		return nil, err
	}
	e := v.byNamespace[namespace][objKey{namespace, name}]
	if e == nil || isSelf(e, c, self) {
		return nil, nil
	}
	return e.val, nil
}

// All are every object the declaration covers, sorted: a scan, for
// policies that need one.
func (s *Store) All(c *Compiled, self Self) ([]ref.Val, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, err := s.view(c)
	if err != nil {
		return nil, err
	}
	out := make([]*entry, 0, v.size)
	for _, ns := range v.byNamespace {
		for _, e := range ns {
			if !isSelf(e, c, self) {
				out = append(out, e)
			}
		}
	}
	return values(out), nil
}

// Select are the objects the declaration covers in a namespace, or in
// every namespace when namespace is "" (as a list of the apiserver reads
// it, unlike InNamespace), whose labels sel matches, sorted by namespace
// and name, self excluded.
func (s *Store) Select(c *Compiled, namespace string, sel labels.Selector, self Self) ([]ref.Val, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, err := s.view(c)
	if err != nil {
		return nil, err
	}
	var out []*entry
	for ns, m := range v.byNamespace {
		if namespace != "" && ns != namespace {
			continue
		}
		for _, e := range m {
			if !isSelf(e, c, self) && sel.Matches(labels.Set(e.labels)) {
				out = append(out, e)
			}
		}
	}
	return values(out), nil
}

// Len is how many objects the declaration covers.
func (s *Store) Len(c *Compiled) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if k := s.kinds[c.GVK]; k != nil {
		if v := k.views[c.id]; v != nil {
			return v.size
		}
	}
	return 0
}

// view is the declaration's view, or why it cannot be read.
func (s *Store) view(c *Compiled) (*view, error) {
	k := s.kinds[c.GVK]
	var v *view
	if k != nil {
		v = k.views[c.id]
	}
	switch {
	case v == nil:
		return nil, fmt.Errorf("reference %s: %s was not registered with tollgate's store: %w", c.Name, KindName(c.GVK), ErrNotListed)
	case !k.complete && k.why != nil:
		return nil, fmt.Errorf("reference %s: %s: %w: %w", c.Name, KindName(c.GVK), ErrNotListed, k.why)
	case !k.complete:
		return nil, fmt.Errorf("reference %s: %s: %w yet", c.Name, KindName(c.GVK), ErrNotListed)
	}
	return v, nil
}

func isSelf(e *entry, c *Compiled, self Self) bool {
	return self.Name != "" && e.key.name == self.Name && e.key.namespace == self.Namespace && c.GVK.GroupKind() == self.GroupKind
}

func sorted(m map[objKey]*entry, c *Compiled, self Self) []ref.Val {
	out := make([]*entry, 0, len(m))
	for _, e := range m {
		if !isSelf(e, c, self) {
			out = append(out, e)
		}
	}
	return values(out)
}

func values(es []*entry) []ref.Val {
	if len(es) > 1 {
		sort.Slice(es, func(i, j int) bool { return es[i].key.less(es[j].key) })
	}
	out := make([]ref.Val, len(es))
	for i, e := range es {
		out[i] = e.val
	}
	return out
}
