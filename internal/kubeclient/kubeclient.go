// Package kubeclient gives tollgate its cluster access: a clientset from a
// kubeconfig file, or from the Pod's service account when it runs in one.
package kubeclient

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrNoAccess: no kubeconfig was given and the process is not in a Pod.
var ErrNoAccess = errors.New("cluster access needed: give --kubeconfig, or run in a Pod")

// New returns a clientset for kubeconfig, or in-cluster when it is empty
// and $KUBERNETES_SERVICE_HOST is set; ErrNoAccess otherwise.
func New(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := Config(kubeconfig)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster access: %w", err)
	}
	return client, nil
}

// Config is the REST configuration New uses, for other kinds of clients.
func Config(kubeconfig string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	switch {
	case kubeconfig != "":
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	case os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		cfg, err = rest.InClusterConfig()
	default:
		return nil, ErrNoAccess
	}
	if err != nil {
		return nil, fmt.Errorf("cluster access: %w", err)
	}
	cfg.UserAgent = "tollgate"
	return cfg, nil
}

// Mapper maps kinds to resources by the apiserver's discovery, cached, and
// looked up again when reset (a CustomResourceDefinition made later).
func Mapper(cfg *rest.Config) (*restmapper.DeferredDiscoveryRESTMapper, error) {
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)), nil
}
