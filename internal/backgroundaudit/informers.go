package backgroundaudit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/tollgate-dev/tollgate/internal/audit"
)

// watched is one resource kind being watched: its informer, until stop.
type watched struct {
	resource audit.Resource
	informer cache.SharedIndexInformer
	stop     context.CancelFunc
	// audited: its objects are evaluated (Namespaces are watched for their
	// labels even when no policy matches them).
	audited atomic.Bool

	mu sync.Mutex
	// failing is the last list or watch error, until the informer syncs.
	failing error
}

// watch starts an informer of r, its objects transformed as they arrive
// (held.go, strip.go), until ctx ends or stop is called. The
// handler handle makes for it gets every add, relevant update and delete;
// onError every list or watch error.
func watch(ctx context.Context, client dynamic.Interface, r audit.Resource, audited bool, transform cache.TransformFunc, handle func(*watched) cache.ResourceEventHandler, onError func(*watched, error)) (*watched, error) {
	ctx, stop := context.WithCancel(ctx)
	inf := dynamicinformer.NewFilteredDynamicInformer(client, r.GVR, "", 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	w := &watched{resource: r, informer: inf, stop: stop}
	w.audited.Store(audited)
	h := handle(w)
	if err := inf.SetTransform(transform); err != nil {
		stop()
		return nil, err
	}
	if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		w.mu.Lock()
		w.failing = err
		w.mu.Unlock()
		onError(w, err)
	}); err != nil {
		stop()
		return nil, err
	}
	if _, err := inf.AddEventHandler(h); err != nil {
		stop()
		return nil, err
	}
	go inf.RunWithContext(ctx)
	return w, nil
}

// settled: the informer has read every object, or cannot (its error).
func (w *watched) settled() (bool, error) {
	if w.informer.HasSynced() {
		w.mu.Lock()
		w.failing = nil
		w.mu.Unlock()
		return true, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failing != nil, w.failing
}

// keys are the store keys of every object held.
func (w *watched) keys() []string {
	out := w.informer.GetStore().ListKeys()
	for i, k := range out {
		out[i] = objectKey(w.resource.GVR, k)
	}
	return out
}

// keysIn are the keys of the objects held in a namespace.
func (w *watched) keysIn(namespace string) []string {
	objs, err := w.informer.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		if k, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			out = append(out, objectKey(w.resource.GVR, k))
		}
	}
	return out
}

// objectKey names an object of a resource: GROUP/VERSION/RESOURCE|NAMESPACE/NAME.
func objectKey(gvr schema.GroupVersionResource, storeKey string) string {
	return gvr.Group + "/" + gvr.Version + "/" + gvr.Resource + "|" + storeKey
}

// splitKey undoes objectKey.
func splitKey(key string) (schema.GroupVersionResource, string, error) {
	res, storeKey, ok := strings.Cut(key, "|")
	parts := strings.Split(res, "/")
	if !ok || len(parts) != 3 {
		return schema.GroupVersionResource{}, "", fmt.Errorf("malformed object key %q", key)
	}
	return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}, storeKey, nil
}
