package cli

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/metrics"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/server"
)

// The certificate sources of serve.
const (
	certSourceFiles       = "files"
	certSourceSelf        = "self"
	certSourceCertManager = "cert-manager"
)

type serveOptions struct {
	listen          string
	certFile        string
	keyFile         string
	config          string
	certDir         string
	dnsNames        []string
	namespace       string
	logLevel        string
	reloadInterval  time.Duration
	shutdownTimeout time.Duration
	drainDelay      time.Duration
	metricsListen   string
	reloadPolicies  time.Duration
	http2           bool
	clientCAFile    string
	cluster         clusterOptions
}

func newServeCommand() *cobra.Command {
	o := serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve admission reviews over HTTPS",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", ":8443", "address to serve HTTPS on")
	f.StringVar(&o.certFile, "tls-cert-file", "", "serving certificate (PEM); reloaded when it changes")
	f.StringVar(&o.keyFile, "tls-private-key-file", "", "serving certificate's private key (PEM)")
	f.StringVar(&o.config, "config", "", policyFlagHelp)
	f.StringVar(&o.certDir, "cert-dir", defaultCertDir(), "where the self-signed CA and serving certificate live when no certificate files are given and there is no cluster access")
	f.StringArrayVar(&o.dnsNames, "dns-name", nil, "extra name for a self-signed serving certificate (repeatable)")
	f.StringVar(&o.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "tollgate's own namespace, never injected nor validated (default $POD_NAMESPACE)")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error; debug logs whole objects")
	f.DurationVar(&o.reloadInterval, "cert-reload-interval", 10*time.Second, "how often certificate files are checked for changes")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight reviews may take to finish on shutdown, after the drain delay")
	f.DurationVar(&o.drainDelay, "shutdown-drain-delay", 5*time.Second, "on SIGTERM, how long to go on serving with /readyz failing and connections closed after each answer, before the listener closes")
	f.StringVar(&o.metricsListen, "metrics-listen", ":9090", "address of the plain-HTTP Prometheus /metrics listener; empty: none")
	f.StringVar(&o.clientCAFile, "client-ca-file", "", "PEM CAs; when set, review paths answer only clients (the apiserver) with a certificate they signed")
	f.BoolVar(&o.http2, "http2", false, "offer HTTP/2 on the webhook listener (off: HTTP/2 Rapid Reset attacks, CVE-2023-44487)")
	f.DurationVar(&o.reloadPolicies, "config-reload-interval", 5*time.Second, "how often --config is checked for changes; a changed, valid set is swapped in without a restart")
	o.cluster.flags(f)
	return cmd
}

func (o *serveOptions) run(cmd *cobra.Command) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return usageError(fmt.Errorf("--log-level: %w", err))
	}
	log := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	met := metrics.New()

	loaded, err := policy.Load(o.config)
	met.PolicyLoad(err)
	if err != nil {
		return fmt.Errorf("load policies: %w", err)
	}
	log.Info("policies loaded", slog.String("source", sourceName(o.config)), slog.Any("policies", loaded.Names()))
	set := newPolicies(loaded)

	ctx := cmd.Context()
	group, ctx := errgroup.WithContext(ctx)
	cl, err := o.cluster.connect(o.kubeconfigNeeded())
	if err != nil {
		return err
	}
	source := o.certSource(cl != nil)
	engOpts := engine.Options{OwnNamespace: o.namespace}
	srvCfg := server.Config{
		Listen:          o.listen,
		Logger:          log,
		ShutdownTimeout: o.shutdownTimeout,
		DrainDelay:      o.drainDelay,
		HTTP2:           o.http2,
		Observer:        met,
	}
	switch source {
	case certSourceSelf:
		if cl == nil {
			return usageError(errors.New("--cert-source=self keeps certificates in a Secret and needs cluster access (--kubeconfig or in-cluster)"))
		}
		store, err := cl.startInCluster(ctx, group, set, o, log, met)
		if err != nil {
			return err
		}
		srvCfg.Certificates = store
		engOpts.Namespaces = cl.namespace
		srvCfg.ReadyChecks = cl.readyChecks
	case certSourceFiles, certSourceCertManager:
		certFile, keyFile, err := o.certificateFiles(log)
		if err != nil {
			return err
		}
		src, err := certs.NewFileSource(certFile, keyFile, o.reloadInterval, log)
		if err != nil {
			return fmt.Errorf("serving certificate: %w", err)
		}
		group.Go(func() error { src.Run(ctx); return nil })
		srvCfg.Certificates = src
		if cl != nil {
			if err := cl.startWithFiles(ctx, group, set, o, source, log, met); err != nil {
				return err
			}
			engOpts.Namespaces = cl.namespace
			srvCfg.ReadyChecks = cl.readyChecks
		}
	default:
		return usageError(fmt.Errorf("--cert-source %q: want files, self or cert-manager", o.cluster.certSource))
	}
	if o.clientCAFile != "" {
		pem, err := os.ReadFile(o.clientCAFile)
		if err != nil {
			return usageError(fmt.Errorf("--client-ca-file: %w", err))
		}
		srvCfg.ClientCAs = x509.NewCertPool()
		if !srvCfg.ClientCAs.AppendCertsFromPEM(pem) {
			return usageError(fmt.Errorf("--client-ca-file %s holds no PEM certificate", o.clientCAFile))
		}
	}
	srvCfg.Routes = routes(engine.New(set.current(), engOpts))
	srv, err := server.New(srvCfg)
	if err != nil {
		return err
	}
	if o.config != "" && o.reloadPolicies > 0 {
		w := &policy.Watcher{Path: o.config, Interval: o.reloadPolicies,
			OnLoad: func(s *policy.Set) {
				met.PolicyLoad(nil)
				set.replace(s)
				srv.SetRoutes(routes(engine.New(s, engOpts)))
				log.Info("policies reloaded", slog.Any("policies", s.Names()))
			},
			OnError: func(err error) {
				met.PolicyLoad(err)
				log.Error("policies not reloaded; the previous set keeps serving", slog.Any("error", err))
			},
		}
		group.Go(func() error { w.Run(ctx); return nil })
	}
	if o.metricsListen != "" {
		group.Go(func() error { return met.Serve(ctx, o.metricsListen, log) })
	}
	group.Go(func() error { return srv.Serve(ctx) })
	return group.Wait()
}

// routes is the server's table for an engine: one review path per policy group.
func routes(eng *engine.Engine) server.Routes {
	var table server.Routes
	for _, g := range eng.Set().Groups {
		table = append(table, server.Route{Path: g.Path(), Handler: eng.Handler(g)})
	}
	return table
}

func (o *serveOptions) kubeconfigNeeded() bool {
	return o.cluster.certSource == certSourceSelf || o.cluster.certSource == certSourceCertManager
}

// certSource resolves the default: certificate files or no cluster mean
// files (self-signed in --cert-dir without files); in a cluster, self.
func (o *serveOptions) certSource(inCluster bool) string {
	switch {
	case o.cluster.certSource != "":
		return o.cluster.certSource
	case o.certFile != "" || o.keyFile != "" || !inCluster:
		return certSourceFiles
	default:
		return certSourceSelf
	}
}

// certificateFiles returns the files to serve: the ones given, or a
// self-signed pair made (or reused) in --cert-dir.
func (o *serveOptions) certificateFiles(log *slog.Logger) (string, string, error) {
	switch {
	case o.certFile != "" && o.keyFile != "":
		return o.certFile, o.keyFile, nil
	case o.certFile != "" || o.keyFile != "":
		return "", "", usageError(errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	ss, err := certs.EnsureSelfSigned(o.certDir, o.dnsNames, time.Now())
	if err != nil {
		return "", "", fmt.Errorf("self-signed certificate: %w", err)
	}
	log.Info("self-signed serving certificate",
		slog.String("caFile", ss.CAPath()), slog.Bool("createdCA", ss.CreatedCA), slog.Bool("createdCertificate", ss.CreatedCert))
	return ss.CertPath(), ss.KeyPath(), nil
}

func sourceName(config string) string {
	if config == "" {
		return policy.DefaultsFile
	}
	return config
}
