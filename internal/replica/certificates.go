package replica

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/tollgate-dev/tollgate/internal/certs"
)

// fileSource serves certificate files, or a self-signed pair kept in
// CertDir, reloading them until ctx ends. A static replica takes only
// certificates signed by a CA of the static manifests' caBundle.
func (r *replica) fileSource(ctx context.Context, static bool) (*certs.FileSource, error) {
	certFile, keyFile, caPath, err := r.certificateFiles()
	if err != nil {
		return nil, err
	}
	var trusted *x509.CertPool
	if static {
		if trusted, err = r.trustedCAs(caPath); err != nil {
			return nil, err
		}
	}
	src, err := certs.NewTrustedFileSource(certFile, keyFile, trusted, r.cfg.CertReloadInterval, r.log)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	r.group.Go(func() error { src.Run(ctx); return nil })
	return src, nil
}

// certificateFiles returns the files to serve: the ones given, or a
// self-signed pair made (or reused) in CertDir, with its CA's file.
func (r *replica) certificateFiles() (cert, key, ca string, err error) {
	c := &r.cfg
	switch {
	case c.CertFile != "" && c.KeyFile != "":
		return c.CertFile, c.KeyFile, "", nil
	case c.CertFile != "" || c.KeyFile != "":
		return "", "", "", configError("--tls-cert-file and --tls-private-key-file go together")
	}
	ss, err := certs.EnsureSelfSigned(c.CertDir, c.DNSNames, time.Now())
	if err != nil {
		return "", "", "", fmt.Errorf("self-signed certificate: %w", err)
	}
	r.log.Info("self-signed serving certificate",
		slog.String("caFile", ss.CAPath()), slog.Bool("createdCA", ss.CreatedCA), slog.Bool("createdCertificate", ss.CreatedCert))
	return ss.CertPath(), ss.KeyPath(), ss.CAPath(), nil
}

// secretStore serves the CA and certificate kept in the Secret, read
// until serving ends; the leader rotates them (lead, on ctx).
func (r *replica) secretStore(ctx, serving context.Context, cl *cluster) (*certs.SecretStore, error) {
	c := &r.cfg.Cluster
	if r.cfg.Namespace == "" {
		return nil, configError("--namespace (or $POD_NAMESPACE) is required with cluster access")
	}
	cl.watchNamespaces(serving)
	svc := c.ServiceName + "." + r.cfg.Namespace
	store := &certs.SecretStore{
		Client: cl.client, Namespace: r.cfg.Namespace, Name: c.SecretName, Log: r.log,
		Config: certs.AuthorityConfig{
			DNSNames:        append([]string{c.ServiceName, svc, svc + ".svc", svc + ".svc.cluster.local"}, r.cfg.DNSNames...),
			CALifetime:      c.CALifetime,
			ServingLifetime: c.CertLifetime,
			Overlap:         c.CAOverlap,
		},
		OnBundle: func([]byte) { r.policies.poke() },
	}
	store.Start(serving)
	r.group.Go(func() error { store.Refresh(serving, c.CertCheckInterval); return nil })
	cl.readyChecks = append(cl.readyChecks, func() error {
		if !store.Synced() {
			return errors.New("certificate Secret not read yet")
		}
		return nil
	})
	r.group.Go(func() error { r.reportExpiry(serving, store); return nil })
	syncer := r.syncer(cl)
	syncer.CABundle = store.CABundle
	r.lead(func(ctx context.Context) {
		go store.Rotate(ctx, c.CertCheckInterval)
		if c.Register {
			syncer.Run(ctx, r.policies.kick)
		} else {
			<-ctx.Done()
		}
	})
	return store, nil
}

// reportExpiry sets the expiry metrics of the Secret's certificates every
// 10 seconds until ctx ends.
func (r *replica) reportExpiry(ctx context.Context, store *certs.SecretStore) {
	wait.UntilWithContext(ctx, func(context.Context) {
		if leaf := store.Leaf(); leaf != nil {
			r.met.CertificateExpiry("serving", leaf.NotAfter)
		}
		for _, ca := range certs.ParseBundle(store.CABundle()) {
			r.met.CertificateExpiry("ca/"+ca.SerialNumber.String(), ca.NotAfter)
		}
	}, 10*time.Second)
}

// clientCAs reads ClientCAFile; nil when there is none.
func (r *replica) clientCAs() (*x509.CertPool, error) {
	if r.cfg.ClientCAFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(r.cfg.ClientCAFile)
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("--client-ca-file: %w", err)}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, &ConfigError{Err: fmt.Errorf("--client-ca-file %s holds no PEM certificate", r.cfg.ClientCAFile)}
	}
	return pool, nil
}
