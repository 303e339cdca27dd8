package params

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// newListed is an informer of fixed objects, for params given offline: it
// lists the objects of a read-only cache.Indexer, and its watch never
// sends, as nothing changes them. generic.CollectParams takes an informer
// (it waits for its sync, then reads its lister); this one is a real
// client-go informer, run by the Store like a cluster's.
func newListed(resource schema.GroupVersionResource, objects cache.Indexer) informers.GenericInformer {
	lw := &staticListWatch{ListWatch: &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			list := &unstructured.UnstructuredList{Object: map[string]any{}}
			list.SetResourceVersion("1")
			for _, o := range objects.List() {
				list.Items = append(list.Items, *o.(*unstructured.Unstructured).DeepCopy())
			}
			return list, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewProxyWatcher(make(chan watch.Event)), nil
		},
	}}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	return &listed{informer: inf, resource: resource.GroupResource()}
}

// staticListWatch lists fixed objects. It does not stream its list as
// watch events (the WatchList protocol an apiserver speaks), and says so,
// so that the informer lists.
type staticListWatch struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported tells client-go's reflector to list.
func (*staticListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// listed is an informer and its lister, as informers.GenericInformer.
type listed struct {
	informer cache.SharedIndexInformer
	resource schema.GroupResource
}

func (l *listed) Informer() cache.SharedIndexInformer { return l.informer }

func (l *listed) Lister() cache.GenericLister {
	return cache.NewGenericLister(l.informer.GetIndexer(), l.resource)
}
