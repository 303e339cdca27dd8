package params

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/tollgate-dev/tollgate/internal/notify"
)

// remapAfter bounds how often an unknown param kind is looked up again
// (a CustomResourceDefinition may be created after the policy).
const remapAfter = time.Second

// Store holds an informer per param kind in use, read from its source.
type Store struct {
	ctx context.Context
	src source

	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*kind
	// users are the kinds each user of the store asked for (Use, UseFor);
	// the store watches their union.
	users map[string][]schema.GroupVersionKind
	// changes are told of every param added, changed or deleted
	// (OnChange).
	changes notify.Subscribers[schema.GroupVersionKind]
}

// serverUser is Use's user: the admission path, whose kinds /readyz waits for.
const serverUser = ""

// source is where a Store reads params from: the cluster (cluster.go) or
// the objects given offline (offline.go).
type source interface {
	// mapper maps param kinds to their resources and scopes.
	mapper() meta.RESTMapper
	// informer returns an informer of one resource, not started, indexed
	// by namespace as the apiserver's param informers are.
	informer(resource schema.GroupVersionResource) informers.GenericInformer
	// direct is the client and mapper generic.CollectParams reads a param
	// the informer has not seen yet with, as the apiserver does; nil, nil
	// when the informer holds every param there is.
	direct() (dynamic.Interface, meta.RESTMapper)
}

// kind is one param kind: its informer and scope once mapped, or why not.
type kind struct {
	informer informers.GenericInformer
	scope    meta.RESTScope
	cancel   context.CancelFunc
	err      error
	tried    time.Time
}

func newStore(ctx context.Context, src source) *Store {
	return &Store{ctx: ctx, src: src, kinds: map[schema.GroupVersionKind]*kind{}, users: map[string][]schema.GroupVersionKind{}}
}

// Use makes the store watch exactly these param kinds for the admission
// path (and those other users ask for, UseFor): informers of kinds no
// longer in use stop, new ones start. A kind that cannot be mapped yet is
// retried when a request needs it.
func (s *Store) Use(gvks []schema.GroupVersionKind) { s.UseFor(serverUser, gvks) }

// UseFor sets the param kinds one user of the store needs (the background
// audit's, for the cluster's own policies, besides the server's); the
// store watches the kinds of every user, each once. Only the server's
// kinds hold readiness (Synced).
func (s *Store) UseFor(user string, gvks []schema.GroupVersionKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[user] = gvks
	want := map[schema.GroupVersionKind]bool{}
	for _, kinds := range s.users {
		for _, gvk := range kinds {
			want[gvk] = true
			if _, ok := s.kinds[gvk]; !ok {
				s.kinds[gvk] = s.start(gvk)
			}
		}
	}
	for gvk, k := range s.kinds {
		if !want[gvk] {
			if k.cancel != nil {
				k.cancel()
			}
			delete(s.kinds, gvk)
		}
	}
}

// start maps a param kind to its resource and starts its informer, as the
// apiserver's policy source does; on failure it records the apiserver's
// configuration error.
func (s *Store) start(gvk schema.GroupVersionKind) *kind {
	mapping, err := s.src.mapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return &kind{err: fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gvk), tried: time.Now()}
	}
	ctx, cancel := context.WithCancel(s.ctx)
	inf := s.src.informer(mapping.Resource)
	if _, err := inf.Informer().AddEventHandler(changeHandler(gvk, s.changes.Notify)); err != nil {
		cancel()
		return &kind{err: fmt.Errorf("params of kind %v: %w", gvk, err), tried: time.Now()}
	}
	go inf.Informer().Run(ctx.Done())
	return &kind{informer: inf, scope: mapping.Scope, cancel: cancel}
}

// lookup returns a param kind's informer and scope, mapping it again if
// it was unknown and the last try is old enough.
func (s *Store) lookup(gvk schema.GroupVersionKind) (*kind, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.kinds[gvk]
	if !ok {
		k = s.start(gvk)
		s.kinds[gvk] = k
	}
	if k.err != nil && time.Since(k.tried) >= remapAfter {
		if r, ok := s.src.mapper().(meta.ResettableRESTMapper); ok {
			r.Reset()
		}
		k = s.start(gvk)
		s.kinds[gvk] = k
	}
	return k, k.err
}

// Kind reports whether a policy's param kind can be read: nil without a
// paramKind, else the apiserver's configuration error for a kind it
// cannot map. Check it once the policy matches, before any binding.
func (s *Store) Kind(paramKind *admissionregistrationv1.ParamKind) error {
	if paramKind == nil {
		return nil
	}
	gvk, err := gvkOf(paramKind)
	if err != nil {
		return err
	}
	_, err = s.lookup(gvk)
	return err
}

// Collect returns the params a binding's paramRef selects for a request in
// namespace, by the apiserver's generic.CollectParams: a single nil
// without paramKind or paramRef, every object a selector matches, none (or
// the Deny error) when nothing is found.
func (s *Store) Collect(paramKind *admissionregistrationv1.ParamKind, ref *admissionregistrationv1.ParamRef, namespace string) ([]runtime.Object, error) {
	if paramKind == nil || ref == nil {
		return generic.CollectParams(paramKind, nil, nil, ref, namespace, nil, nil)
	}
	gvk, err := gvkOf(paramKind)
	if err != nil {
		return nil, err
	}
	k, err := s.lookup(gvk)
	if err != nil {
		return nil, err
	}
	dyn, mapper := s.src.direct()
	return generic.CollectParams(paramKind, k.informer, k.scope, ref, namespace, dyn, mapper)
}

// Synced is nil once every param kind the admission path uses (Use) has
// been read; /readyz waits for it. A kind that cannot be mapped does not
// hold readiness: requests get the apiserver's configuration error for it,
// as from the apiserver.
func (s *Store) Synced() error { return s.SyncedFor(serverUser) }

// SyncedFor is Synced for the kinds of one user (UseFor).
func (s *Store) SyncedFor(user string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, gvk := range s.users[user] {
		if k := s.kinds[gvk]; k != nil && k.informer != nil && !k.informer.Informer().HasSynced() {
			errs = append(errs, fmt.Errorf("params of kind %v not read yet", gvk))
		}
	}
	return errors.Join(errs...)
}

// OnChange has f called with its kind whenever a param of a kind the store
// watches is added, changed or deleted (after the store holds the change),
// from the informers' goroutines, until remove is called: a policy's
// verdict on stored objects may change with it.
func (s *Store) OnChange(f func(schema.GroupVersionKind)) (remove func()) {
	return s.changes.Add(f)
}

func changeHandler(gvk schema.GroupVersionKind, f func(schema.GroupVersionKind)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { f(gvk) },
		UpdateFunc: func(any, any) { f(gvk) },
		DeleteFunc: func(any) { f(gvk) },
	}
}

// WaitSynced waits until Synced or ctx ends.
func (s *Store) WaitSynced(ctx context.Context) error { return s.WaitSyncedFor(ctx, serverUser) }

// WaitSyncedFor waits until SyncedFor(user) or ctx ends.
func (s *Store) WaitSyncedFor(ctx context.Context, user string) error {
	for {
		err := s.SyncedFor(user)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func gvkOf(paramKind *admissionregistrationv1.ParamKind) (schema.GroupVersionKind, error) {
	gv, err := schema.ParseGroupVersion(paramKind.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("failed to parse paramKind APIVersion: %w", err)
	}
	return gv.WithKind(paramKind.Kind), nil
}
