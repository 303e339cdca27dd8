package backgroundaudit

// What the results hold of each object's finding: only what a report
// reads (the object's kind, name and uid, its results, an error), and the
// results and kinds repeated across objects (a policy's pass, its fail
// with a static message) as handles of one shared copy (package unique),
// rather than the finding the engine returns (its warnings, the defaulted
// object, every result of its own). The results hold
// one per audited object, for as long as it is stored; a namespace's
// findings are built again only to write its reports.

import (
	"strconv"
	"unique"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
)

// compact is a finding as the results hold it.
type compact struct {
	gvk  unique.Handle[schema.GroupVersionKind]
	name string
	// results: each one shared by every object with the same result (a
	// policy's pass, or its fail with a static message), exactly as long
	// as it needs to be.
	results []unique.Handle[engine.Result]
	err     error
}

// compactOf is what the results hold of f.
func compactOf(f offline.Finding) compact {
	k := compact{gvk: unique.Make(f.Object.GVK), name: f.Object.Name, err: f.Err}
	if len(f.Results) > 0 {
		k.results = make([]unique.Handle[engine.Result], len(f.Results))
	}
	for i, r := range f.Results {
		k.results[i] = unique.Make(r)
	}
	return k
}

// finding is the finding k was made from, as a report reads it: of the
// object's JSON, only its uid.
func (k compact) finding(namespace string, uid types.UID) offline.Finding {
	f := offline.Finding{
		Object: &manifest.Object{GVK: k.gvk.Value(), Namespace: namespace, Name: k.name,
			JSON: []byte(`{"metadata":{"uid":` + strconv.Quote(string(uid)) + `}}`)},
		Err:     k.err,
		Allowed: true,
	}
	for _, r := range k.results {
		res := r.Value()
		if res.Outcome == engine.Fail {
			f.Allowed = false
		}
		f.Results = append(f.Results, res)
	}
	return f
}

// same tells whether two compact findings would give the same report.
func (k compact) same(o compact) bool {
	if (k.err == nil) != (o.err == nil) || (k.err != nil && k.err.Error() != o.err.Error()) {
		return false
	}
	if k.gvk != o.gvk || k.name != o.name || len(k.results) != len(o.results) {
		return false
	}
	for i := range k.results {
		if k.results[i] != o.results[i] {
			return false
		}
	}
	return true
}
