package offline

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/references"
)

// errNoReferences is why a declared kind cannot be read on a path given no
// objects at all (tollgate review without --references).
var errNoReferences = errors.New("no objects were given to read it from: give them with --references FILE|DIR")

// errNoCluster is why a declared kind cannot be read by a server without
// cluster access.
var errNoCluster = errors.New("tollgate runs without cluster access, and reads referenced objects only from a cluster")

// referenceStore is the store of the set's declared references, filled
// with the candidates: every object given, as the cluster would hold them
// (a namespaced object that names no namespace in defaultNS). With
// candidates given, every declared kind is complete (none of a kind among
// them means there are none); without, each is unavailable, for why. Nil
// when no policy declares references.
func referenceStore(set *policy.Set, candidates []*unstructured.Unstructured, given bool, why error, kinds *manifest.Kinds, defaultNS string) *references.Store {
	if len(set.References()) == 0 {
		return nil
	}
	if defaultNS == "" {
		defaultNS = "default"
	}
	st := set.NewReferenceStore()
	for _, u := range candidates {
		if u.GetNamespace() == "" {
			if m, ok := kinds.Lookup(u.GroupVersionKind()); ok && m.Namespaced {
				u = u.DeepCopy()
				u.SetNamespace(defaultNS)
			}
		}
		st.Upsert(u)
	}
	for _, gvk := range st.Kinds() {
		if given {
			st.Complete(gvk)
		} else {
			st.Unavailable(gvk, why)
		}
	}
	return st
}

// unstructuredOf decodes manifests.
func unstructuredOf(objs []*manifest.Object) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, m := range objs {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(m.JSON); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Where(), err)
		}
		out = append(out, u)
	}
	return out, nil
}
