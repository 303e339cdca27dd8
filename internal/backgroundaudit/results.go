package backgroundaudit

import (
	"slices"
	"sort"
	"sync"
	"unique"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/offline"
)

// entry is what the policies made of one stored object.
type entry struct {
	namespace string
	uid       types.UID
	finding   offline.Finding
}

// stored is an entry as the results hold it (compact.go).
type stored struct {
	namespace string
	uid       types.UID
	compact   compact
}

// results holds the latest finding of every audited object, by key
// (resource and namespace/name), and which keys each namespace holds. It
// tells whether a new finding changes a namespace's report.
type results struct {
	mu          sync.Mutex
	byKey       map[string]stored
	byNamespace map[string]map[string]struct{}
}

func newResults() *results {
	return &results{byKey: map[string]stored{}, byNamespace: map[string]map[string]struct{}{}}
}

// set keeps e for key; it returns whether the namespace's report changes.
func (r *results) set(key string, e entry) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := compactOf(e.finding)
	if old, ok := r.byKey[key]; ok && old.uid == e.uid && old.namespace == e.namespace && old.compact.same(c) {
		return false
	}
	r.byKey[key] = stored{namespace: e.namespace, uid: e.uid, compact: c}
	keys := r.byNamespace[e.namespace]
	if keys == nil {
		keys = map[string]struct{}{}
		r.byNamespace[e.namespace] = keys
	}
	keys[key] = struct{}{}
	return true
}

// remove forgets key; it returns the namespace whose report changes, and
// whether there was anything to forget.
func (r *results) remove(key string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byKey[key]
	if !ok {
		return "", false
	}
	delete(r.byKey, key)
	keys := r.byNamespace[e.namespace]
	delete(keys, key)
	if len(keys) == 0 {
		delete(r.byNamespace, e.namespace)
	}
	return e.namespace, true
}

// findings are a namespace's findings, in key order: a report's content
// does not depend on the order objects were evaluated in.
func (r *results) findings(namespace string) []offline.Finding {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]string, 0, len(r.byNamespace[namespace]))
	for k := range r.byNamespace[namespace] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]offline.Finding, len(keys))
	for i, k := range keys {
		e := r.byKey[k]
		out[i] = e.compact.finding(e.namespace, e.uid)
	}
	return out
}

// keys are every key held.
func (r *results) keys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.byKey))
	for k := range r.byKey {
		out = append(out, k)
	}
	return out
}

// exemptedBy are the keys with a result exempted by one of the exceptions.
func (r *results) exemptedBy(exceptions map[string]bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k, e := range r.byKey {
		if slices.ContainsFunc(e.compact.results, func(res unique.Handle[engine.Result]) bool { return exceptions[res.Value().Exception] }) {
			out = append(out, k)
		}
	}
	return out
}

// has tells whether a namespace holds results.
func (r *results) has(namespace string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byNamespace[namespace]) > 0
}

// counts are the results held, by outcome.
func (r *results) counts() map[engine.Outcome]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[engine.Outcome]int{}
	for _, e := range r.byKey {
		for _, res := range e.compact.results {
			out[res.Value().Outcome]++
		}
	}
	return out
}
