package replica

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/internal/kubeclient"
)

// cluster is what cluster access gives a replica.
type cluster struct {
	config      *rest.Config
	client      kubernetes.Interface
	namespaces  listersv1.NamespaceLister
	readyChecks []func() error
}

// connect returns nil without cluster access, unless required.
func connect(kubeconfig string, required bool) (*cluster, error) {
	cfg, err := kubeclient.Config(kubeconfig)
	var client kubernetes.Interface
	if err == nil {
		client, err = kubernetes.NewForConfig(cfg)
	}
	switch {
	case errors.Is(err, kubeclient.ErrNoAccess) && !required:
		return nil, nil
	case errors.Is(err, kubeclient.ErrNoAccess):
		return nil, &ConfigError{Err: err}
	case err != nil:
		return nil, err
	}
	return &cluster{config: cfg, client: client}, nil
}

// namespace serves engine.Options.Namespaces from the informer.
func (cl *cluster) namespace(name string) (*corev1.Namespace, bool) {
	ns, err := cl.namespaces.Get(name)
	if err != nil {
		return nil, false
	}
	return ns, true
}

// watchNamespaces starts the namespace informer until ctx ends; /readyz
// waits for it.
func (cl *cluster) watchNamespaces(ctx context.Context) {
	factory := informers.NewSharedInformerFactory(cl.client, 10*time.Minute)
	inf := factory.Core().V1().Namespaces()
	cl.namespaces = inf.Lister()
	synced := inf.Informer().HasSynced
	factory.Start(ctx.Done())
	cl.readyChecks = append(cl.readyChecks, func() error {
		if !synced() {
			return errors.New("namespaces not read yet")
		}
		return nil
	})
}
