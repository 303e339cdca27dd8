package offline

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/internal/authz"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/params"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// syncTimeout bounds the wait for the in-memory param informers.
const syncTimeout = 10 * time.Second

// External is what the set's policies read offline, taken from objects
// (the set's own Objects, manifests, --params files): params resolved by
// params.NewOffline, and an RBAC authorizer when objects hold RBAC objects
// (without any, every authorizer check errors, naming what is missing).
// The params store lives until ctx ends.
func External(ctx context.Context, set *policy.Set, objects []*unstructured.Unstructured) (external.Sources, error) {
	all := append(append([]*unstructured.Unstructured{}, set.Objects...), objects...)
	var ext external.Sources
	for _, o := range all {
		if authz.IsRBAC(o) {
			r, err := authz.NewRBAC(all)
			if err != nil {
				return ext, err
			}
			ext.Authorizer = r
			break
		}
	}
	store, err := params.NewOffline(ctx, all)
	if err != nil {
		return ext, err
	}
	store.Use(set.ParamKinds())
	wait, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if err := store.WaitSynced(wait); err != nil {
		return ext, err
	}
	ext.Params = store
	return ext, nil
}

// Unstructured turns manifests into objects for External.
func Unstructured(objs []*manifest.Object) ([]*unstructured.Unstructured, error) {
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

// ExternalFor is External with the objects of the manifests given and of
// the files or directories in paramPaths (--params).
func ExternalFor(ctx context.Context, set *policy.Set, paramPaths []string, manifests []*manifest.Object) (external.Sources, error) {
	objs := manifests
	if len(paramPaths) > 0 {
		more, err := manifest.Read(paramPaths, nil)
		if err != nil {
			return external.Sources{}, fmt.Errorf("params: %w", err)
		}
		objs = append(append([]*manifest.Object{}, manifests...), more...)
	}
	us, err := Unstructured(objs)
	if err != nil {
		return external.Sources{}, err
	}
	return External(ctx, set, us)
}
