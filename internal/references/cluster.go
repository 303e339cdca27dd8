package references

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/tollgate-dev/tollgate/internal/kubeclient"
)

// remapEvery is how often a declared kind the apiserver does not serve is
// looked up again (its CustomResourceDefinition may come later).
const remapEvery = 5 * time.Second

// Cluster fills a Store from the apiserver: one informer per declared kind
// (Store.Kinds), started and stopped as Follow finds the kinds declared.
// Informers hold objects as the store keeps them (Store.Project): Secrets through a
// metadata-only informer, so that their data never reaches tollgate. A
// kind tollgate may not list, or that the apiserver does not serve, is
// Unavailable in the store with the reason, which every lookup of it then
// gives (and failurePolicy decides); it is never an empty set.
type Cluster struct {
	ctx    context.Context
	store  *Store
	dyn    dynamic.Interface
	meta   metadata.Interface
	mapper meta.ResettableRESTMapper

	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*watch
}

// watch is one declared kind's informer, or why there is none yet.
type watch struct {
	cancel context.CancelFunc
	// generation is the store's of the kind it fills (Store.Generation).
	generation int
	mu         sync.Mutex
	synced     bool
	err        error
}

func (w *watch) set(synced bool, err error) {
	w.mu.Lock()
	w.synced, w.err = synced, err
	w.mu.Unlock()
}

// NewCluster returns a source filling store from the apiserver of cfg until
// ctx ends; Follow starts its informers.
func NewCluster(ctx context.Context, cfg *rest.Config, store *Store) (*Cluster, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("references: %w", err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("references: %w", err)
	}
	mapper, err := kubeclient.Mapper(cfg)
	if err != nil {
		return nil, fmt.Errorf("references: %w", err)
	}
	return newCluster(ctx, store, dyn, mc, mapper), nil
}

func newCluster(ctx context.Context, store *Store, dyn dynamic.Interface, mc metadata.Interface, mapper meta.ResettableRESTMapper) *Cluster {
	return &Cluster{ctx: ctx, store: store, dyn: dyn, meta: mc, mapper: mapper, kinds: map[schema.GroupVersionKind]*watch{}}
}

// Follow watches exactly the kinds the store declares now (after
// Store.Use): informers of kinds no longer declared stop, new ones start,
// and a kind the store made again is listed again.
func (c *Cluster) Follow() {
	want := map[schema.GroupVersionKind]int{}
	for _, gvk := range c.store.Kinds() {
		want[gvk] = c.store.Generation(gvk)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for gvk, w := range c.kinds {
		if want[gvk] != w.generation {
			w.cancel()
			delete(c.kinds, gvk)
		}
	}
	for gvk, generation := range want {
		if _, ok := c.kinds[gvk]; !ok {
			ctx, cancel := context.WithCancel(c.ctx)
			w := &watch{cancel: cancel, generation: generation}
			c.kinds[gvk] = w
			go c.run(ctx, gvk, w)
		}
	}
}

// Synced is nil once every declared kind has been listed; /readyz waits
// for it. A kind that cannot be read (not served, not allowed) does not
// hold readiness: its policies' requests get the reason, and their
// failurePolicy decides.
func (c *Cluster) Synced() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for gvk, w := range c.kinds {
		w.mu.Lock()
		if !w.synced && w.err == nil {
			errs = append(errs, fmt.Errorf("referenced %s not read yet", KindName(gvk)))
		}
		w.mu.Unlock()
	}
	return errors.Join(errs...)
}

// run maps the kind (again every remapEvery while the apiserver serves
// no such kind), then runs its informer until ctx ends.
func (c *Cluster) run(ctx context.Context, gvk schema.GroupVersionKind, w *watch) {
	var mapping *meta.RESTMapping
	for {
		var err error
		if mapping, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			break
		}
		c.unavailable(ctx, gvk, w, fmt.Errorf("the apiserver serves no such kind: %w", err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(remapEvery):
			c.mapper.Reset()
		}
	}
	inf := c.informer(gvk, mapping.Resource)
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.upsert(ctx, gvk, obj) },
		UpdateFunc: func(_, obj any) { c.upsert(ctx, gvk, obj) },
		DeleteFunc: func(obj any) { c.delete(ctx, gvk, obj) },
	}
	reg, err := inf.AddEventHandler(handler)
	if err != nil {
		c.unavailable(ctx, gvk, w, err)
		return
	}
	resource := mapping.Resource.GroupResource().String()
	_ = inf.SetWatchErrorHandler(func(r *cache.Reflector, err error) {
		cache.DefaultWatchErrorHandler(ctx, r, err)
		if !apierrors.IsForbidden(err) || inf.HasSynced() {
			return
		}
		c.unavailable(ctx, gvk, w, fmt.Errorf("tollgate may not list %s: grant its ServiceAccount get, list and watch on them (chart value references.resources): %w", resource, err))
	})
	go inf.Run(ctx.Done())
	// The handler's sync, not the informer's: its initial adds are in the
	// store.
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return
	}
	w.set(true, nil)
	if current(ctx) {
		c.store.Complete(gvk)
	}
}

// unavailable records why a kind cannot be read, in its watch (readiness)
// and in the store (its lookups), while its informer is current.
func (c *Cluster) unavailable(ctx context.Context, gvk schema.GroupVersionKind, w *watch, why error) {
	w.set(false, why)
	if current(ctx) {
		c.store.Unavailable(gvk, why)
	}
}

// informer is the kind's informer, not started: a metadata-only one for
// Secrets, else a dynamic one holding objects trimmed.
func (c *Cluster) informer(gvk schema.GroupVersionKind, resource schema.GroupVersionResource) cache.SharedIndexInformer {
	if gvk.GroupKind() == secretKind {
		return metadatainformer.NewFilteredMetadataInformer(c.meta, resource, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	}
	var inf informers.GenericInformer = dynamicinformer.NewFilteredDynamicInformer(c.dyn, resource, metav1.NamespaceAll, 0, cache.Indexers{}, nil)
	_ = inf.Informer().SetTransform(func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			u.Object = c.store.Project(gvk, u.Object)
		}
		return obj, nil
	})
	return inf.Informer()
}

// current tells whether the informer of ctx still feeds the store: a
// stopped one's last events must not.
func current(ctx context.Context) bool { return ctx.Err() == nil }

func (c *Cluster) upsert(ctx context.Context, gvk schema.GroupVersionKind, obj any) {
	if !current(ctx) {
		return
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured: // projected by the informer's transform
		c.store.upsert(o, true)
	default:
		if u := fromMetadata(gvk, obj); u != nil {
			c.store.Upsert(u)
		}
	}
}

func (c *Cluster) delete(ctx context.Context, gvk schema.GroupVersionKind, obj any) {
	if !current(ctx) {
		return
	}
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, err := meta.Accessor(obj); err == nil {
		c.store.Delete(gvk, m.GetNamespace(), m.GetName())
	}
}

// fromMetadata is a metadata-only informer's object as the store takes
// it: apiVersion, kind and metadata; nil for anything else.
func fromMetadata(gvk schema.GroupVersionKind, obj any) *unstructured.Unstructured {
	o, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&o.ObjectMeta)
	if err != nil {
		return nil
	}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": m}}
	u.SetGroupVersionKind(gvk)
	return u
}
