package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/replica"
)

func newServeCommand() *cobra.Command {
	var cfg replica.Config
	var logLevel, credentials string
	var registry registryFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve admission reviews over HTTPS",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return usageError(fmt.Errorf("--log-level: %w", err))
			}
			if cfg.Cluster.Registration == replica.RegistrationStatic && cmd.Flags().Changed("register") && cfg.Cluster.Register {
				return usageError(errors.New("--register and --registration=static contradict each other: a static replica never writes webhook configurations through the API"))
			}
			regs, err := registry.registries(false)
			if err != nil {
				return usageError(err)
			}
			cfg.Registries = regs
			switch credentials {
			case "anonymous":
			case "pull-secrets":
				cfg.PullSecrets = true
			default:
				return usageError(fmt.Errorf("--registry-credentials %q: use anonymous or pull-secrets", credentials))
			}
			cfg.Logger = slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			return serveError(replica.Run(cmd.Context(), cfg))
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", ":8443", "address to serve HTTPS on")
	f.StringVar(&cfg.CertFile, "tls-cert-file", "", "serving certificate (PEM); reloaded when it changes")
	f.StringVar(&cfg.KeyFile, "tls-private-key-file", "", "serving certificate's private key (PEM)")
	f.StringVar(&cfg.Policies, "config", "", policyFlagHelp)
	f.StringVar(&cfg.CertDir, "cert-dir", defaultCertDir(), "where the self-signed CA and serving certificate live when no certificate files are given and there is no cluster access")
	f.StringArrayVar(&cfg.DNSNames, "dns-name", nil, "extra name for a self-signed serving certificate (repeatable)")
	f.StringVar(&cfg.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "tollgate's own namespace, never injected nor validated (default $POD_NAMESPACE)")
	addFastPathFlag(f, &cfg.NoCELFastPath)
	f.StringVar(&credentials, "registry-credentials", "anonymous", "how verifyImages policies reach registries: anonymous, or pull-secrets (each workload's imagePullSecrets and its ServiceAccount's, read by name; needs get on secrets and serviceaccounts)")
	f.StringSliceVar(&cfg.ExcludeNamespaces, "exclude-namespaces", nil, "more namespaces never injected nor validated, left out of every webhook (comma-separated, repeatable)")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error; debug logs whole objects")
	f.DurationVar(&cfg.CertReloadInterval, "cert-reload-interval", 10*time.Second, "how often certificate files are checked for changes")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight reviews may take to finish on shutdown, after the drain delay")
	f.DurationVar(&cfg.DrainDelay, "shutdown-drain-delay", 5*time.Second, "on SIGTERM, how long to go on serving with /readyz failing and connections closed after each answer, before the listener closes")
	f.StringVar(&cfg.MetricsListen, "metrics-listen", ":9090", "address of the plain-HTTP Prometheus /metrics listener; empty: none")
	f.BoolVar(&cfg.Profiling, "profiling", false, "also serve Go's profiles (heap, CPU, goroutines) under /debug/pprof/ on the --metrics-listen address")
	f.StringVar(&cfg.ClientCAFile, "client-ca-file", "", "PEM CAs; when set, review paths answer only clients (the apiserver) with a certificate they signed")
	f.BoolVar(&cfg.HTTP2, "http2", false, "offer HTTP/2 on the webhook listener (off: HTTP/2 Rapid Reset attacks, CVE-2023-44487)")
	f.DurationVar(&cfg.PolicyReloadInterval, "config-reload-interval", 5*time.Second, "how often --config is checked for changes; a changed, valid set is swapped in without a restart")
	addRegistryFlags(f, &registry)
	clusterFlags(f, &cfg.Cluster)
	return cmd
}

// serveError gives a replica's configuration errors the usage exit code.
func serveError(err error) error {
	if ce := (*replica.ConfigError)(nil); errors.As(err, &ce) {
		return usageError(err)
	}
	return err
}
