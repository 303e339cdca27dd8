package offline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/internal/authz"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/params"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// syncTimeout bounds the wait for the param informers.
const syncTimeout = 10 * time.Second

// inPolicyFiles is where an object found with the policies was read.
const inPolicyFiles = "the policy files"

// Input is what the policies read offline besides the set's own objects.
type Input struct {
	// ParamPaths are files and directories of more objects (--params).
	ParamPaths []string
	// Manifests are the objects under check: those of a param kind are
	// params too, and RBAC objects feed the authorizer.
	Manifests []*manifest.Object
	// Kinds maps param kinds to resources; the CustomResourceDefinitions
	// among every object are added to it. NewKinds() unless set.
	Kinds *manifest.Kinds
	// DefaultNamespace is the namespace of namespaced params that name
	// none, as of manifests under check; "default" unless set.
	DefaultNamespace string
	// ReferencePaths are files and directories of the objects the
	// policies' spec.references read (--references), besides Manifests,
	// which are all candidates too.
	ReferencePaths []string
	// References are more objects the references read (a Kyverno test's
	// context); with OnlyReferences, the only ones: Manifests are not
	// candidates.
	References     []*unstructured.Unstructured
	OnlyReferences bool
}

// ExternalFor is what the set's policies read offline, taken from the
// set's own objects, in.Manifests and the objects of in.ParamPaths: params
// (objects of a kind some policy names as paramKind, resolved by
// params.NewOffline) and an RBAC authorizer when the objects hold RBAC
// objects (without any, every authorizer check errors, naming what is
// missing). The objects the policies reference are in.Manifests and those
// of in.ReferencePaths (referenceStore). The params store lives until ctx
// ends.
func ExternalFor(ctx context.Context, set *policy.Set, in Input) (external.Sources, error) {
	if in.Kinds == nil {
		in.Kinds = manifest.NewKinds()
	}
	objs := append([]*manifest.Object{}, in.Manifests...)
	if len(in.ParamPaths) > 0 {
		more, err := manifest.Read(in.ParamPaths, nil)
		if err != nil {
			return external.Sources{}, fmt.Errorf("params: %w", err)
		}
		objs = append(objs, more...)
	}
	var all []params.Object
	for _, o := range set.Objects {
		all = append(all, params.Object{Unstructured: o, Where: inPolicyFiles})
	}
	for _, m := range objs {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(m.JSON); err != nil {
			return external.Sources{}, fmt.Errorf("%s: %w", m.Where(), err)
		}
		all = append(all, params.Object{Unstructured: u, Where: m.Where()})
	}
	var errs []error
	for _, o := range all {
		if o.GroupVersionKind() != manifest.CRDKind {
			continue
		}
		js, err := o.MarshalJSON()
		if err == nil {
			err = in.Kinds.AddCRD(o.Where, js)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return external.Sources{}, errors.Join(errs...)
	}
	ext, err := sources(ctx, set, all, in.Kinds, in.DefaultNamespace)
	if err != nil {
		return ext, err
	}
	var candidates []*unstructured.Unstructured
	if !in.OnlyReferences {
		if candidates, err = unstructuredOf(in.Manifests); err != nil {
			return ext, err
		}
	}
	candidates = append(candidates, in.References...)
	if len(in.ReferencePaths) > 0 {
		more, err := manifest.Read(in.ReferencePaths, nil)
		if err != nil {
			return ext, fmt.Errorf("references: %w", err)
		}
		us, err := unstructuredOf(more)
		if err != nil {
			return ext, fmt.Errorf("references: %w", err)
		}
		candidates = append(candidates, us...)
	}
	given := len(in.Manifests) > 0 || len(in.ReferencePaths) > 0 || in.OnlyReferences
	ext.References = referenceStore(set, candidates, given, errNoReferences, in.Kinds, in.DefaultNamespace)
	if err := gatekeeperInventory(ctx, set, candidates, given, in.Kinds, in.DefaultNamespace); err != nil {
		return ext, err
	}
	return ext, nil
}

// External is ExternalFor with objects whose files are not known, besides
// the set's own: the server without cluster access reads the objects found
// with its policies.
func External(ctx context.Context, set *policy.Set, objects []*unstructured.Unstructured) (external.Sources, error) {
	kinds := manifest.NewKinds()
	var all []params.Object
	for _, o := range append(append([]*unstructured.Unstructured{}, set.Objects...), objects...) {
		all = append(all, params.Object{Unstructured: o, Where: inPolicyFiles})
		if o.GroupVersionKind() != manifest.CRDKind {
			continue
		}
		js, err := o.MarshalJSON()
		if err == nil {
			err = kinds.AddCRD(inPolicyFiles, js)
		}
		if err != nil {
			return external.Sources{}, err
		}
	}
	ext, err := sources(ctx, set, all, kinds, "")
	if err != nil {
		return ext, err
	}
	ext.References = referenceStore(set, nil, false, errNoCluster, kinds, "")
	return ext, nil
}

func sources(ctx context.Context, set *policy.Set, all []params.Object, kinds *manifest.Kinds, defaultNS string) (external.Sources, error) {
	var ext external.Sources
	us := make([]*unstructured.Unstructured, 0, len(all))
	for _, o := range all {
		us = append(us, o.Unstructured)
	}
	for _, o := range us {
		if authz.IsRBAC(o) {
			r, err := authz.NewRBAC(us)
			if err != nil {
				return ext, err
			}
			ext.Authorizer = r
			break
		}
	}
	store, err := params.NewOffline(ctx, params.Offline{ParamKinds: set.ParamKinds(), Objects: all, Kinds: kinds, DefaultNamespace: defaultNS})
	if err != nil {
		return ext, err
	}
	wait, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if err := store.WaitSynced(wait); err != nil {
		return ext, err
	}
	ext.Params = store
	return ext, nil
}
