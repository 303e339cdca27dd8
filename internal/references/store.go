package references

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/notify"
)

// Sink is what fills a store: the offline reader from files, informers in
// a cluster. Complete says a source has listed every object of a kind (an
// informer's cache synced, or the files read); Unavailable that it cannot,
// and why (the kind may not be listed, no file gives it): lookups of that
// kind then fail with the reason, which failurePolicy decides.
type Sink interface {
	Upsert(obj *unstructured.Unstructured)
	Delete(gvk schema.GroupVersionKind, namespace, name string)
	Complete(gvk schema.GroupVersionKind)
	Unavailable(gvk schema.GroupVersionKind, why error)
}

// Store holds the objects of the declared kinds, each once, and for each
// declaration (Register) the objects it covers, by namespace and by each
// of its index keys. It is safe for concurrent use: lookups read under a
// read lock, updates take the write lock.
type Store struct {
	mu    sync.RWMutex
	kinds map[schema.GroupVersionKind]*kindState
	// generations counts the kinds made, each its generation.
	generations int

	// changes are told of each change of a kind (OnChange).
	changes notify.Subscribers[schema.GroupVersionKind]
}

var _ Sink = (*Store)(nil)

// objKey is an object's namespace and name.
type objKey struct{ namespace, name string }

func (k objKey) less(o objKey) bool {
	if k.namespace != o.namespace {
		return k.namespace < o.namespace
	}
	return k.name < o.name
}

// entry is one stored object: its trimmed content, its CEL value, made once.
type entry struct {
	key    objKey
	labels map[string]string
	val    ref.Val
}

type kindState struct {
	// generation tells a kind made again (Use) from the one before it.
	generation int
	// fields is the union of what its declarations keep (nil: whole
	// objects); declared says a declaration has set it.
	fields   *fieldNode
	declared bool
	complete bool
	why      error // why it is unavailable, nil when not said
	objects  map[objKey]*entry
	views    map[string]*view
}

// view is what one declaration covers of its kind.
type view struct {
	c           *Compiled
	byNamespace map[string]map[objKey]*entry
	// index: index name, key, objects; keysOf: the keys each object is
	// indexed under, to take it out on update or delete.
	index  map[string]map[string]map[objKey]*entry
	keysOf map[objKey]map[string][]string
	// problems are the objects an index key could not be computed of.
	problems map[objKey]string
	size     int
}

// New returns an empty store.
func New() *Store { return &Store{kinds: map[schema.GroupVersionKind]*kindState{}} }

// Register makes the store keep what a declaration covers, indexing the
// objects it already holds.
func (s *Store) Register(c *Compiled) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.kind(c.GVK)
	if !k.declared {
		k.fields, k.declared = c.fields, true
	} else {
		k.fields = union(k.fields, c.fields)
	}
	if _, ok := k.views[c.id]; ok {
		return
	}
	v := &view{c: c, byNamespace: map[string]map[objKey]*entry{}, index: map[string]map[string]map[objKey]*entry{},
		keysOf: map[objKey]map[string][]string{}, problems: map[objKey]string{}}
	for name := range c.indexes {
		v.index[name] = map[string]map[objKey]*entry{}
	}
	k.views[c.id] = v
	for _, e := range k.objects {
		v.add(e)
	}
}

// Kinds are the kinds declared, sorted: what a cluster source lists.
func (s *Store) Kinds() []schema.GroupVersionKind {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]schema.GroupVersionKind, 0, len(s.kinds))
	for gvk := range s.kinds {
		out = append(out, gvk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (s *Store) kind(gvk schema.GroupVersionKind) *kindState {
	k := s.kinds[gvk]
	if k == nil {
		s.generations++
		k = &kindState{generation: s.generations, objects: map[objKey]*entry{}, views: map[string]*view{}}
		s.kinds[gvk] = k
	}
	return k
}

// Upsert adds or replaces an object of a declared kind (others are
// ignored), trimmed (Trim) to the fields its declarations keep, and
// indexed by every declaration covering it.
func (s *Store) Upsert(obj *unstructured.Unstructured) { s.upsert(obj, false) }

// upsert is Upsert of an object projected already (Project), or not.
func (s *Store) upsert(obj *unstructured.Unstructured, projected bool) {
	gvk := obj.GroupVersionKind()
	s.mu.Lock()
	k := s.kinds[gvk]
	if k == nil {
		s.mu.Unlock()
		return
	}
	content := obj.Object
	if !projected {
		content = project(gvk, content, k.fields)
	}
	e := &entry{key: objKey{obj.GetNamespace(), obj.GetName()}, labels: obj.GetLabels(),
		val: types.DefaultTypeAdapter.NativeToValue(content)}
	if old := k.objects[e.key]; old != nil {
		for _, v := range k.views {
			v.remove(old)
		}
	}
	k.objects[e.key] = e
	for _, v := range k.views {
		v.add(e)
	}
	s.mu.Unlock()
	s.changes.Notify(gvk)
}

// Delete takes an object out.
func (s *Store) Delete(gvk schema.GroupVersionKind, namespace, name string) {
	s.mu.Lock()
	k := s.kinds[gvk]
	var old *entry
	if k != nil {
		key := objKey{namespace, name}
		if old = k.objects[key]; old != nil {
			for _, v := range k.views {
				v.remove(old)
			}
			delete(k.objects, key)
		}
	}
	s.mu.Unlock()
	if old != nil {
		s.changes.Notify(gvk)
	}
}

// Complete marks a kind listed in full.
func (s *Store) Complete(gvk schema.GroupVersionKind) {
	s.mu.Lock()
	k := s.kinds[gvk]
	changed := k != nil && !k.complete
	if k != nil {
		k.complete, k.why = true, nil
	}
	s.mu.Unlock()
	if changed {
		s.changes.Notify(gvk)
	}
}

// Unavailable marks a kind not listed, and why.
func (s *Store) Unavailable(gvk schema.GroupVersionKind, why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.kinds[gvk]; k != nil {
		k.complete, k.why = false, why
	}
}

// Problems are the objects whose index keys could not be computed (they
// are in no key of that index), one line each, sorted.
func (s *Store) Problems() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, k := range s.kinds {
		for _, v := range k.views {
			for key, p := range v.problems {
				out = append(out, fmt.Sprintf("reference %s: %s %s: %s", v.c.Name, v.c.Kind, nsName(key), p))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func nsName(k objKey) string {
	if k.namespace == "" {
		return k.name
	}
	return k.namespace + "/" + k.name
}

func (v *view) add(e *entry) {
	if !v.c.selects(e.key.namespace, e.labels) {
		return
	}
	v.size++
	ns := v.byNamespace[e.key.namespace]
	if ns == nil {
		ns = map[objKey]*entry{}
		v.byNamespace[e.key.namespace] = ns
	}
	ns[e.key] = e
	var problems []string
	for name, kp := range v.c.indexes {
		keys, err := kp.keys(e.val)
		if err != nil {
			problems = append(problems, fmt.Sprintf("index %s: %v", name, err))
			continue
		}
		if len(keys) == 0 {
			continue
		}
		if v.keysOf[e.key] == nil {
			v.keysOf[e.key] = map[string][]string{}
		}
		v.keysOf[e.key][name] = keys
		for _, key := range keys {
			m := v.index[name][key]
			if m == nil {
				m = map[objKey]*entry{}
				v.index[name][key] = m
			}
			m[e.key] = e
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		v.problems[e.key] = strings.Join(problems, "; ")
	}
}

func (v *view) remove(e *entry) {
	ns := v.byNamespace[e.key.namespace]
	if _, ok := ns[e.key]; !ok {
		return
	}
	v.size--
	delete(ns, e.key)
	if len(ns) == 0 {
		delete(v.byNamespace, e.key.namespace)
	}
	for name, keys := range v.keysOf[e.key] {
		for _, key := range keys {
			m := v.index[name][key]
			delete(m, e.key)
			if len(m) == 0 {
				delete(v.index[name], key)
			}
		}
	}
	delete(v.keysOf, e.key)
	delete(v.problems, e.key)
}
