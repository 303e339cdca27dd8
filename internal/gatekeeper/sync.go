package gatekeeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// Sync keeps an evaluator's data.inventory in step with a cluster, as
// Gatekeeper's sync controller does: one informer per kind the Config
// syncs, every object added, updated and removed. Until every informer has
// synced, the inventory is not given, and referential Constraints give
// errors (ErrNoInventory) for the requests they select.
type Sync struct {
	mu  sync.Mutex
	err error // why the inventory is not complete; nil once it is
}

// StartSync starts the informers of the evaluator's synced kinds until
// ctx ends. Nothing is started for an evaluator no Constraint of which
// reads data.inventory.
func StartSync(ctx context.Context, e *Evaluator, dyn dynamic.Interface, mapper meta.RESTMapper) *Sync {
	s := &Sync{}
	if !e.NeedsInventory() {
		return s
	}
	s.err = errors.New("gatekeeper sync: the inventory is not synced yet")
	go s.run(ctx, e, dyn, mapper)
	return s
}

// Synced is nil once the inventory holds every synced object, else why not.
func (s *Sync) Synced() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Sync) set(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

func (s *Sync) run(ctx context.Context, e *Evaluator, dyn dynamic.Interface, mapper meta.RESTMapper) {
	var wg sync.WaitGroup
	for _, gvk := range e.Syncs() {
		wg.Add(1)
		go s.kind(ctx, e, gvk, dyn, mapper, sync.OnceFunc(wg.Done))
	}
	wg.Wait()
	if ctx.Err() == nil {
		e.InventoryGiven()
		s.set(nil)
	}
}

// kind syncs one kind until ctx ends, and calls synced once its objects
// are in the inventory. A kind the apiserver does not serve has none: it
// counts as synced, and is mapped again every few seconds (its CRD may
// come later). Any other error leaves the inventory incomplete, saying so.
func (s *Sync) kind(ctx context.Context, e *Evaluator, gvk schema.GroupVersionKind, dyn dynamic.Interface, mapper meta.RESTMapper, synced func()) {
	defer synced() // ctx ended: nobody waits any longer
	var mapping *meta.RESTMapping
	for {
		var err error
		if mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			break
		}
		if meta.IsNoMatchError(err) {
			synced()
		} else {
			s.set(fmt.Errorf("gatekeeper sync of %s: %w", gvk, err))
		}
		if r, ok := mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, mapping.Resource, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.add(ctx, e, obj) },
		UpdateFunc: func(_, obj any) { s.add(ctx, e, obj) },
		DeleteFunc: func(obj any) { s.remove(ctx, e, obj) },
	})
	if err != nil {
		s.set(fmt.Errorf("gatekeeper sync of %s: %w", gvk, err))
		<-ctx.Done()
		return
	}
	resource := mapping.Resource.GroupResource().String()
	_ = inf.SetWatchErrorHandler(func(r *cache.Reflector, err error) {
		cache.DefaultWatchErrorHandler(ctx, r, err)
		if apierrors.IsForbidden(err) && !inf.HasSynced() {
			s.set(fmt.Errorf("gatekeeper sync: tollgate may not list %s: grant its ServiceAccount get, list and watch on them: %w", resource, err))
		}
	})
	go inf.Run(ctx.Done())
	if cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		synced()
	}
	<-ctx.Done()
}

func (s *Sync) add(ctx context.Context, e *Evaluator, obj any) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if err := e.AddData(ctx, u); err != nil {
			slog.Error("gatekeeper sync", "error", err)
		}
	}
}

func (s *Sync) remove(ctx context.Context, e *Evaluator, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if err := e.RemoveData(ctx, u); err != nil {
			slog.Error("gatekeeper sync", "error", err)
		}
	}
}
