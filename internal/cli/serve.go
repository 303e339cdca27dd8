package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/server"
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
}

func newServeCommand() *cobra.Command {
	o := serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve admission reviews over HTTPS",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", ":8443", "address to serve HTTPS on")
	f.StringVar(&o.certFile, "tls-cert-file", "", "serving certificate (PEM); reloaded when it changes")
	f.StringVar(&o.keyFile, "tls-private-key-file", "", "serving certificate's private key (PEM)")
	f.StringVar(&o.config, "config", "", policyFlagHelp)
	f.StringVar(&o.certDir, "cert-dir", defaultCertDir(), "where the self-signed CA and serving certificate live when no certificate files are given")
	f.StringArrayVar(&o.dnsNames, "dns-name", nil, "extra name for the self-signed serving certificate (repeatable)")
	f.StringVar(&o.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "tollgate's own namespace, never injected nor validated (default $POD_NAMESPACE)")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error; debug logs whole objects")
	f.DurationVar(&o.reloadInterval, "cert-reload-interval", 10*time.Second, "how often certificate files are checked for changes")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 25*time.Second, "how long in-flight reviews may take to finish on shutdown")
	return cmd
}

func (o *serveOptions) run(cmd *cobra.Command) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))

	set, err := policy.Load(o.config)
	if err != nil {
		return fmt.Errorf("load policies: %w", err)
	}
	log.Info("policies loaded", slog.String("source", sourceName(o.config)), slog.Any("policies", set.Names()))

	certFile, keyFile, err := o.certificateFiles(log)
	if err != nil {
		return err
	}
	src, err := certs.NewFileSource(certFile, keyFile, o.reloadInterval, log)
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	srv, err := server.New(server.Config{
		Listen:          o.listen,
		Engine:          engine.New(set, engine.Options{OwnNamespace: o.namespace}),
		Certificates:    src,
		Logger:          log,
		ShutdownTimeout: o.shutdownTimeout,
	})
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	go src.Run(ctx)
	return srv.Serve(ctx)
}

// certificateFiles returns the files to serve: the ones given, or a
// self-signed pair made (or reused) in --cert-dir.
func (o *serveOptions) certificateFiles(log *slog.Logger) (string, string, error) {
	switch {
	case o.certFile != "" && o.keyFile != "":
		return o.certFile, o.keyFile, nil
	case o.certFile != "" || o.keyFile != "":
		return "", "", errors.New("--tls-cert-file and --tls-private-key-file go together")
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
