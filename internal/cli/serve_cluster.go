package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/leader"
	"github.com/tollgate-dev/tollgate/internal/metrics"
	"github.com/tollgate-dev/tollgate/internal/registration"
)

// clusterOptions are serve's flags for running with cluster access.
type clusterOptions struct {
	kubeconfig     string
	certSource     string
	serviceName    string
	servicePort    int32
	secretName     string
	webhookName    string
	caFile         string
	injectCAFrom   string
	register       bool
	timeoutSeconds int32
	leaderElect    bool
	leaseName      string
	leaseDuration  time.Duration
	renewDeadline  time.Duration
	retryPeriod    time.Duration
	caLifetime     time.Duration
	certLifetime   time.Duration
	caOverlap      time.Duration
	certInterval   time.Duration
	resync         time.Duration
}

func (c *clusterOptions) flags(f *pflag.FlagSet) {
	f.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig for cluster access (default: in-cluster when running in a Pod)")
	f.StringVar(&c.certSource, "cert-source", "", "files, self (a CA and certificate kept in a Secret; default with cluster access) or cert-manager")
	f.StringVar(&c.serviceName, "service-name", "tollgate", "the Service the apiserver calls tollgate through")
	f.Int32Var(&c.servicePort, "service-port", 443, "the Service's port")
	f.StringVar(&c.secretName, "secret-name", "tollgate-certs", "Secret holding the self-managed CA and serving certificate")
	f.StringVar(&c.webhookName, "webhook-config-name", "tollgate", "name of the webhook configurations tollgate keeps")
	f.StringVar(&c.caFile, "ca-file", "", "with --cert-source=files and cluster access: the CA bundle to register")
	f.StringVar(&c.injectCAFrom, "inject-ca-from", "", "with --cert-source=cert-manager: NAMESPACE/CERTIFICATE whose CA cert-manager injects")
	f.BoolVar(&c.register, "register", true, "with cluster access: create and keep the webhook configurations")
	f.Int32Var(&c.timeoutSeconds, "webhook-timeout-seconds", 5, "timeoutSeconds of the registered webhooks")
	f.BoolVar(&c.leaderElect, "leader-elect", true, "with cluster access: only the Lease holder writes certificates and configurations")
	f.StringVar(&c.leaseName, "lease-name", "tollgate-leader", "the leader election Lease")
	f.DurationVar(&c.leaseDuration, "lease-duration", 15*time.Second, "how long a lost leader keeps the Lease")
	f.DurationVar(&c.renewDeadline, "lease-renew-deadline", 10*time.Second, "how long the leader tries to renew before giving up")
	f.DurationVar(&c.retryPeriod, "lease-retry-period", 2*time.Second, "how often candidates try to take the Lease")
	f.DurationVar(&c.caLifetime, "ca-lifetime", certs.CALifetime, "lifetime of a self-managed CA")
	f.DurationVar(&c.certLifetime, "cert-lifetime", 90*24*time.Hour, "lifetime of a self-managed serving certificate")
	f.DurationVar(&c.caOverlap, "ca-overlap", time.Minute, "how long a new CA is trusted before it signs (CA rotation)")
	f.DurationVar(&c.certInterval, "cert-check-interval", 30*time.Second, "how often the leader checks the certificates, and every replica re-reads the Secret while its certificate is due for renewal")
	f.DurationVar(&c.resync, "registration-resync", time.Minute, "how often the leader re-applies the webhook configurations without an event")
}

// clusterConn is what cluster access gives a serving replica.
type clusterConn struct {
	client      kubernetes.Interface
	namespaces  listersv1.NamespaceLister
	readyChecks []func() error
}

// connect returns nil without cluster access, unless required.
func (c *clusterOptions) connect(required bool) (*clusterConn, error) {
	var cfg *rest.Config
	var err error
	switch {
	case c.kubeconfig != "":
		cfg, err = clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	case os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		cfg, err = rest.InClusterConfig()
	case required:
		return nil, usageError(errors.New("cluster access needed: give --kubeconfig, or run in a Pod"))
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster access: %w", err)
	}
	cfg.UserAgent = "tollgate"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster access: %w", err)
	}
	return &clusterConn{client: client}, nil
}

// namespace serves engine.Options.Namespaces from the informer.
func (cl *clusterConn) namespace(name string) (*corev1.Namespace, bool) {
	ns, err := cl.namespaces.Get(name)
	if err != nil {
		return nil, false
	}
	return ns, true
}

// watchNamespaces starts the namespace informer; /readyz waits for it.
func (cl *clusterConn) watchNamespaces(ctx context.Context) {
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

func (cl *clusterConn) syncer(policies *policies, o *serveOptions, log *slog.Logger) *registration.Syncer {
	c := &o.cluster
	set := policies.current()
	return &registration.Syncer{
		Client:   cl.client,
		Policies: policies.current,
		Options: registration.Options{
			Name:               c.webhookName,
			Service:            &registration.Service{Name: c.serviceName, Namespace: o.namespace, Port: c.servicePort},
			TimeoutSeconds:     c.timeoutSeconds,
			ExcludedNamespaces: engine.New(set, engine.Options{OwnNamespace: o.namespace}).Excluded(),
			CAInjectFrom:       c.injectCAFrom,
		},
		Log:    log,
		Resync: c.resync,
	}
}

// lead runs work on the leader only, or on this replica when election is off.
func (cl *clusterConn) lead(ctx context.Context, group *errgroup.Group, o *serveOptions, log *slog.Logger, met *metrics.Metrics, work func(ctx context.Context)) {
	c := &o.cluster
	run := func(ctx context.Context) {
		met.Leading(true)
		defer met.Leading(false)
		work(ctx)
	}
	if !c.leaderElect {
		group.Go(func() error { run(ctx); return nil })
		return
	}
	id, _ := os.Hostname()
	if pod := os.Getenv("POD_NAME"); pod != "" {
		id = pod
	}
	id = fmt.Sprintf("%s_%d", id, os.Getpid())
	group.Go(func() error {
		leader.Run(ctx, leader.Config{
			Client: cl.client, Namespace: o.namespace, Name: c.leaseName, Identity: id,
			LeaseDuration: c.leaseDuration, RenewDeadline: c.renewDeadline, RetryPeriod: c.retryPeriod, Log: log,
		}, run)
		return nil
	})
}

// startInCluster runs the self-managed mode: certificates in a Secret that
// every replica serves from, rotated and registered by the leader.
func (cl *clusterConn) startInCluster(ctx context.Context, group *errgroup.Group, set *policies, o *serveOptions, log *slog.Logger, met *metrics.Metrics) (*certs.SecretStore, error) {
	c := &o.cluster
	if o.namespace == "" {
		return nil, usageError(errors.New("--namespace (or $POD_NAMESPACE) is required with cluster access"))
	}
	cl.watchNamespaces(ctx)
	svc := c.serviceName + "." + o.namespace
	kick := set.kick
	store := &certs.SecretStore{
		Client: cl.client, Namespace: o.namespace, Name: c.secretName, Log: log,
		Config: certs.AuthorityConfig{
			DNSNames:        append([]string{c.serviceName, svc, svc + ".svc", svc + ".svc.cluster.local"}, o.dnsNames...),
			CALifetime:      c.caLifetime,
			ServingLifetime: c.certLifetime,
			Overlap:         c.caOverlap,
		},
		OnBundle: func([]byte) { set.poke() },
	}
	store.Start(ctx)
	group.Go(func() error { store.Refresh(ctx, c.certInterval); return nil })
	cl.readyChecks = append(cl.readyChecks, func() error {
		if !store.Synced() {
			return errors.New("certificate Secret not read yet")
		}
		return nil
	})
	group.Go(func() error { reportExpiry(ctx, met, store); return nil })
	syncer := cl.syncer(set, o, log)
	syncer.CABundle = store.CABundle
	cl.lead(ctx, group, o, log, met, func(ctx context.Context) {
		go store.Rotate(ctx, c.certInterval)
		if c.register {
			syncer.Run(ctx, kick)
		} else {
			<-ctx.Done()
		}
	})
	return store, nil
}

// startWithFiles gives a file-served replica what cluster access adds:
// namespace labels, and registration by the leader.
func (cl *clusterConn) startWithFiles(ctx context.Context, group *errgroup.Group, set *policies, o *serveOptions, source string, log *slog.Logger, met *metrics.Metrics) error {
	c := &o.cluster
	if o.namespace == "" {
		return usageError(errors.New("--namespace (or $POD_NAMESPACE) is required with cluster access"))
	}
	cl.watchNamespaces(ctx)
	if !c.register {
		return nil
	}
	syncer := cl.syncer(set, o, log)
	switch {
	case source == certSourceCertManager && c.injectCAFrom == "":
		return usageError(errors.New("--cert-source=cert-manager needs --inject-ca-from NAMESPACE/CERTIFICATE"))
	case source == certSourceFiles:
		if c.caFile == "" {
			return usageError(errors.New("registering with --cert-source=files needs --ca-file (or --register=false)"))
		}
		ca, err := os.ReadFile(c.caFile)
		if err != nil {
			return fmt.Errorf("--ca-file: %w", err)
		}
		syncer.Options.CABundle = ca
	}
	cl.lead(ctx, group, o, log, met, func(ctx context.Context) { syncer.Run(ctx, set.kick) })
	return nil
}

func reportExpiry(ctx context.Context, met *metrics.Metrics, store *certs.SecretStore) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		if leaf := store.Leaf(); leaf != nil {
			met.CertificateExpiry("serving", leaf.NotAfter)
		}
		for _, ca := range certs.ParseBundle(store.CABundle()) {
			met.CertificateExpiry("ca/"+ca.SerialNumber.String(), ca.NotAfter)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
