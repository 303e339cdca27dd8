package offline

import (
	"context"
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
	st := set.NewReferenceStore()
	for _, u := range candidates {
		st.Upsert(asStored(u, kinds, defaultNS))
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

// gatekeeperInventory fills the data.inventory of the set's Gatekeeper
// Constraints with the candidates of the kinds its Config syncs, as the
// cluster would hold them (namespaced in defaultNS when they name none).
// Given nothing, the inventory stays unknown, and each referential
// Constraint that selects a request says so.
func gatekeeperInventory(ctx context.Context, set *policy.Set, candidates []*unstructured.Unstructured, given bool, kinds *manifest.Kinds, defaultNS string) error {
	e := set.GatekeeperEvaluator()
	if e == nil || !e.NeedsInventory() || !given {
		return nil
	}
	objs := make([]*unstructured.Unstructured, 0, len(candidates))
	for _, u := range candidates {
		objs = append(objs, asStored(u, kinds, defaultNS))
	}
	if err := e.SetInventory(ctx, objs); err != nil {
		return fmt.Errorf("gatekeeper inventory: %w", err)
	}
	return nil
}

// asStored is an object as the cluster would hold it: a namespaced object
// that names no namespace in defaultNS ("default" when unset).
func asStored(u *unstructured.Unstructured, kinds *manifest.Kinds, defaultNS string) *unstructured.Unstructured {
	if u.GetNamespace() != "" {
		return u
	}
	if m, ok := kinds.Lookup(u.GroupVersionKind()); ok && m.Namespaced {
		if defaultNS == "" {
			defaultNS = "default"
		}
		u = u.DeepCopy()
		u.SetNamespace(defaultNS)
	}
	return u
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
