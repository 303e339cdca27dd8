package params

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/tollgate-dev/tollgate/internal/kubeclient"
)

// resync is the apiserver's resync period for param informers.
const resync = 10 * time.Minute

// NewCluster returns a store reading params from the cluster until ctx
// ends: a dynamic informer per param kind, kinds mapped by discovery
// (looked up again when a kind is not known yet, e.g. a CRD created after
// the policy), and a param the cache has not seen yet read directly, as
// the apiserver does.
func NewCluster(ctx context.Context, cfg *rest.Config) (*Store, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	mapper, err := kubeclient.Mapper(cfg)
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	return newStore(ctx, &cluster{dyn: dyn, restMapper: mapper}), nil
}

// cluster reads params from an apiserver.
type cluster struct {
	dyn        dynamic.Interface
	restMapper meta.RESTMapper
}

func (c *cluster) mapper() meta.RESTMapper { return c.restMapper }

func (c *cluster) informer(resource schema.GroupVersionResource) informers.GenericInformer {
	return dynamicinformer.NewFilteredDynamicInformer(c.dyn, resource, "", resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil)
}

func (c *cluster) direct() (dynamic.Interface, meta.RESTMapper) { return c.dyn, c.restMapper }
