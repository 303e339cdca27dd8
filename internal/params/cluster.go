package params

import (
	"context"
	"fmt"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

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
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return newStore(ctx, dyn, mapper, true), nil
}
