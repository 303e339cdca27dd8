// Package replica owns the lifetime of one serving tollgate replica. From a
// Config it brings up the policies and their reload, the serving
// certificate, cluster access (the namespace informer, registration of the
// webhooks, leader election, the certificate Secret), the metrics listener
// and the HTTPS server, and shuts them down in order.
package replica

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/tollgate-dev/tollgate/internal/imageverify"

	"golang.org/x/sync/errgroup"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/metrics"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/server"
	"github.com/tollgate-dev/tollgate/internal/version"
)

// replica is one Run: its configuration and the parts every component
// shares.
type replica struct {
	cfg      Config
	log      *slog.Logger
	met      *metrics.Metrics
	policies *policies
	// loaded is the policy.Fingerprint of cfg.Policies before it was loaded.
	loaded string
	group  *errgroup.Group
	// leading is the work of the leader (lead), started by startLeading.
	leading []func(ctx context.Context)
}

// Run serves until ctx ends, then shuts down in order. First the leader's
// work (certificate rotation, registration) stops, releasing the Lease,
// and the server drains (server.Config.DrainDelay, ShutdownTimeout); what
// it answers with meanwhile (certificates, policies and their reload,
// namespace labels) and the metrics listener stop once it has. An error of
// any part shuts everything down the same way, and Run returns the first.
// A *ConfigError is a Config that cannot run.
func Run(ctx context.Context, cfg Config) error {
	cfg.defaults()
	r := &replica{cfg: cfg, log: cfg.Logger, met: metrics.New()}
	v := version.Get()
	r.log.Info("tollgate starting", slog.String("version", v.Version), slog.String("revision", v.Revision),
		slog.Bool("modified", v.Modified), slog.String("go", v.GoVersion), slog.String("platform", v.Platform))
	if cfg.Policies != "" {
		r.loaded = policy.Fingerprint(cfg.Policies)
	}
	loaded, err := policy.Load(cfg.Policies)
	r.met.PolicyLoad(err)
	if err != nil {
		return fmt.Errorf("load policies: %w", err)
	}
	r.log.Info("policies loaded", slog.String("source", sourceName(cfg.Policies)), slog.Any("policies", loaded.Names()))
	r.policies = newPolicies(loaded)

	// ctx ends at shutdown (or the first error): leading stops, the server
	// drains. serving ends once the server has stopped.
	ctx, shutdown := context.WithCancel(ctx)
	defer shutdown()
	serving, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	group, ctx := errgroup.WithContext(ctx)
	r.group = group
	srv, err := r.start(ctx, serving)
	if err != nil {
		shutdown()
		stopServing()
		_ = group.Wait()
		return err
	}
	r.releaseStartup()
	group.Go(func() error {
		defer stopServing()
		return srv.Serve(ctx)
	})
	return group.Wait()
}

// start brings up everything but the server's listener, in the order of
// their dependencies, and returns the server to serve.
func (r *replica) start(ctx, serving context.Context) (*server.Server, error) {
	// A static registration's refusals of a certificate source given
	// explicitly come before the need for cluster access.
	if _, err := r.cfg.static(r.cfg.Cluster.CertSource); err != nil {
		return nil, err
	}
	cl, err := connect(r.cfg.Cluster.Kubeconfig, r.cfg.kubeconfigNeeded())
	if err != nil {
		return nil, err
	}
	source := r.cfg.certSource(cl != nil)
	static, err := r.cfg.static(source)
	if err != nil {
		return nil, err
	}
	engOpts := engine.Options{OwnNamespace: r.cfg.Namespace, ExcludeNamespaces: r.cfg.ExcludeNamespaces, NoCELFastPath: r.cfg.NoCELFastPath,
		Images: imageverify.New(imageverify.Options{Registries: r.cfg.Registries, Observer: r.met}), ImageBudget: imageBudget(r.cfg.Cluster.WebhookTimeoutSeconds)}
	if r.cfg.PullSecrets {
		engOpts.ImageCredentials = imageverify.PullSecrets(cl.client)
	}
	srvCfg := server.Config{
		Listen:          r.cfg.Listen,
		Logger:          r.log,
		ShutdownTimeout: r.cfg.ShutdownTimeout,
		DrainDelay:      r.cfg.DrainDelay,
		HTTP2:           r.cfg.HTTP2,
		Observer:        r.met,
	}
	switch source {
	case CertSourceSelf:
		if cl == nil {
			return nil, configError("--cert-source=self keeps certificates in a Secret and needs cluster access (--kubeconfig or in-cluster)")
		}
		store, err := r.secretStore(ctx, serving, cl)
		if err != nil {
			return nil, err
		}
		srvCfg.Certificates = store
	case CertSourceFiles, CertSourceCertManager:
		src, err := r.fileSource(serving, static)
		if err != nil {
			return nil, err
		}
		srvCfg.Certificates = src
		if cl != nil {
			if r.cfg.Namespace == "" {
				return nil, configError("--namespace (or $POD_NAMESPACE) is required with cluster access")
			}
			cl.watchNamespaces(serving)
			if !static {
				if err := r.registerWithFiles(ctx, cl, source); err != nil {
					return nil, err
				}
			}
		}
		if static {
			r.followStatic(ctx, cl)
		}
	default:
		return nil, &ConfigError{Err: fmt.Errorf("--cert-source %q: want files, self or cert-manager", r.cfg.Cluster.CertSource)}
	}
	ext, err := r.newExternal(serving, cl)
	if err != nil {
		return nil, err
	}
	if engOpts.External, err = ext.follow(r.policies.current()); err != nil {
		return nil, err
	}
	if cl != nil {
		if err := r.backgroundAudit(ctx, cl, engOpts); err != nil {
			return nil, err
		}
		engOpts.Namespaces = cl.namespace
		srvCfg.ReadyChecks = cl.readyChecks
	}
	if srvCfg.ClientCAs, err = r.clientCAs(); err != nil {
		return nil, err
	}
	srvCfg.Routes = Routes(engine.New(r.policies.current(), engOpts))
	srv, err := server.New(srvCfg)
	if err != nil {
		return nil, err
	}
	r.watchPolicies(serving, srv, engOpts, ext)
	r.startLeading(ctx, cl)
	if r.cfg.MetricsListen != "" {
		r.group.Go(func() error { return r.met.Serve(serving, r.cfg.MetricsListen, r.cfg.Profiling, r.log) })
	}
	return srv, nil
}

// imageBudget bounds a review's registry calls a second under the
// webhooks' timeout, so that tollgate answers (and the policy's
// failurePolicy decides) before the apiserver gives up.
func imageBudget(timeoutSeconds int32) time.Duration {
	if timeoutSeconds <= 1 {
		return 0 // the engine's default
	}
	return time.Duration(timeoutSeconds-1) * time.Second
}
