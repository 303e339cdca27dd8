package params

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/tollgate-dev/tollgate/internal/manifest"
)

// Object is an object given offline, with where it was read.
type Object struct {
	*unstructured.Unstructured
	// Where names it for people: file:line, or the policy files.
	Where string
}

// Offline is what NewOffline reads params from.
type Offline struct {
	// ParamKinds are the param kinds of the loaded policies; only objects
	// of these kinds are params.
	ParamKinds []schema.GroupVersionKind
	// Objects are every object given: manifests, the policy set's own
	// objects, --params files.
	Objects []Object
	// Kinds maps param kinds to resources and scopes: built in, from a
	// CustomResourceDefinition, else guessed from the objects of the kind
	// (namespaced when one names a namespace). A kind with none of these
	// is not found, as in a cluster without it.
	Kinds *manifest.Kinds
	// DefaultNamespace is the namespace of a namespaced param that names
	// none, as kubectl apply would create it ("default" unless set).
	DefaultNamespace string
}

// NewOffline returns a store, in use for in.ParamKinds, whose params are
// the objects of those kinds, held in a read-only cache.Indexer per
// resource and read through an informer by generic.CollectParams as in a
// cluster. A namespaced param without a namespace is in DefaultNamespace
// and a cluster-scoped one has none, as the apiserver would store them.
// Two params of one kind, namespace and name are an error naming both, as
// is a param at another version than the policy reads (tollgate does not
// convert between versions) or an object without apiVersion or kind.
func NewOffline(ctx context.Context, in Offline) (*Store, error) {
	if in.Kinds == nil {
		in.Kinds = manifest.NewKinds()
	}
	if in.DefaultNamespace == "" {
		in.DefaultNamespace = "default"
	}
	versions := map[schema.GroupKind][]string{}
	for _, gvk := range in.ParamKinds {
		versions[gvk.GroupKind()] = append(versions[gvk.GroupKind()], gvk.Version)
	}
	var errs []error
	byKind := map[schema.GroupVersionKind][]Object{}
	for _, o := range in.Objects {
		gvk := o.GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			errs = append(errs, fmt.Errorf("params: %s: object %q has no apiVersion or kind", o.Where, o.GetName()))
			continue
		}
		want, ok := versions[gvk.GroupKind()]
		if !ok {
			continue
		}
		if !slices.Contains(want, gvk.Version) {
			errs = append(errs, fmt.Errorf("params: %s: %s %q is %s; the policies read %s params as %s, and tollgate does not convert between versions",
				o.Where, gvk.Kind, o.GetName(), gvk.GroupVersion(), gvk.GroupKind(), strings.Join(want, ", ")))
			continue
		}
		byKind[gvk] = append(byKind[gvk], o)
	}
	src := &offline{restMapper: meta.NewDefaultRESTMapper(nil), objects: map[schema.GroupVersionResource]cache.Indexer{}}
	for _, gvk := range in.ParamKinds {
		objs := byKind[gvk]
		m, ok := in.Kinds.Lookup(gvk)
		if !ok && len(objs) > 0 {
			var err error
			if m, err = in.Kinds.Resource(gvk, slices.ContainsFunc(objs, func(o Object) bool { return o.GetNamespace() != "" })); err != nil {
				errs = append(errs, fmt.Errorf("params: %s: %w", objs[0].Where, err))
				continue
			}
			ok = true
		}
		if !ok {
			continue // not found when a policy needs it, as in a cluster
		}
		if err := src.add(gvk, m, objs, in.DefaultNamespace); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s := newStore(ctx, src)
	s.Use(in.ParamKinds)
	return s, nil
}

// offline holds the params given offline: one read-only indexer per
// resource.
type offline struct {
	restMapper *meta.DefaultRESTMapper
	objects    map[schema.GroupVersionResource]cache.Indexer
}

// add maps one param kind and indexes its objects.
func (s *offline) add(gvk schema.GroupVersionKind, m manifest.Mapping, objs []Object, defaultNS string) error {
	scope := meta.RESTScopeRoot
	if m.Namespaced {
		scope = meta.RESTScopeNamespace
	}
	s.restMapper.AddSpecific(gvk, m.Resource, m.Resource.GroupVersion().WithResource(strings.ToLower(gvk.Kind)), scope)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	s.objects[m.Resource] = idx
	where := map[string]string{}
	var errs []error
	for _, o := range objs {
		p := o.DeepCopy()
		if !m.Namespaced {
			p.SetNamespace("")
		} else if p.GetNamespace() == "" {
			p.SetNamespace(defaultNS)
		}
		if p.GetName() == "" {
			if p.GetGenerateName() == "" {
				errs = append(errs, fmt.Errorf("params: %s: %s has neither metadata.name nor metadata.generateName", o.Where, gvk.Kind))
				continue
			}
			p.SetName(names.SimpleNameGenerator.GenerateName(p.GetGenerateName()))
		}
		key, err := cache.MetaNamespaceKeyFunc(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("params: %s: %w", o.Where, err))
			continue
		}
		if first, dup := where[key]; dup {
			errs = append(errs, fmt.Errorf("params: %s %s is given twice, at %s and at %s", gvk.Kind, key, first, o.Where))
			continue
		}
		where[key] = o.Where
		if err := idx.Add(p); err != nil {
			errs = append(errs, fmt.Errorf("params: %s: %w", o.Where, err))
		}
	}
	return errors.Join(errs...)
}

func (s *offline) mapper() meta.RESTMapper { return s.restMapper }

func (s *offline) informer(resource schema.GroupVersionResource) informers.GenericInformer {
	idx, ok := s.objects[resource]
	if !ok {
		idx = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	}
	return newListed(resource, idx)
}

func (s *offline) direct() (dynamic.Interface, meta.RESTMapper) { return nil, nil }
