package replica

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/registration"
)

// static tells whether the replica's webhook configurations are the
// apiserver's static manifests, and refuses, with the reason, what would
// break when a certificate is renewed: the apiserver trusts the caBundle of
// the manifest file until someone rewrites the file.
func (c *Config) static(source string) (bool, error) {
	cl := &c.Cluster
	switch cl.Registration {
	case "", RegistrationAPI:
		return false, nil
	case RegistrationStatic:
	default:
		return false, configError(fmt.Sprintf("--registration %q: want api or static", cl.Registration))
	}
	switch {
	case source == CertSourceSelf:
		return true, configError("--registration=static cannot use --cert-source=self: the self-managed CA is renewed " +
			"(at two thirds of --ca-lifetime) and kept only in a Secret, while the apiserver trusts the caBundle of the " +
			"static manifest until that file is rewritten, so after the first CA rotation every call would fail TLS " +
			"verification. Serve certificate files (--tls-cert-file, --tls-private-key-file) from a CA you keep, or " +
			"from cert-manager issuing from a long-lived CA, and give that CA as --ca-file (see docs/deploy.md)")
	case cl.InjectCAFrom != "":
		return true, configError("--registration=static cannot use --inject-ca-from: cert-manager's CA injector writes " +
			"the caBundle of webhook configurations in the API, and static manifests are files it never sees. Give the " +
			"issuing CA (the Certificate Secret's ca.crt) as --ca-file, the bundle written by tollgate manifests --static --ca-file")
	case cl.CAFile == "" && (c.CertFile != "" || c.KeyFile != "" || source == CertSourceCertManager):
		return true, configError("--registration=static needs --ca-file: the caBundle written into the static manifests " +
			"(tollgate manifests --static --ca-file). A renewed serving certificate that CA did not sign is then not " +
			"taken, so the apiserver never loses a certificate it trusts")
	}
	return true, nil
}

// trustedCAs is the static manifests' caBundle, read from CAFile, or from
// caPath (the self-signed CA in CertDir) when CAFile is not given.
func (r *replica) trustedCAs(caPath string) (*x509.CertPool, error) {
	file := r.cfg.Cluster.CAFile
	if file == "" {
		file = caPath
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("--ca-file: %w", err)}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, &ConfigError{Err: fmt.Errorf("--ca-file %s holds no PEM certificate", file)}
	}
	return pool, nil
}

// followStatic is what a static replica does instead of registering: it
// says so, warns once if configurations of the same name were registered
// through the API (the apiserver would call tollgate twice for every
// request), and, on every policy reload that changes the webhooks, that
// the manifests must be written again on every control-plane node.
func (r *replica) followStatic(ctx context.Context, cl *cluster) {
	c := &r.cfg.Cluster
	r.log.Info("registration is static: the webhook configurations are the apiserver's static manifests; this replica never creates, repairs or deletes configurations through the API")
	if cl != nil {
		r.warnAPIRegistered(ctx, cl)
	}
	changes := r.policies.changes()
	last := r.staticWebhooks(r.policies.current())
	r.group.Go(func() error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-changes:
			}
			now := r.staticWebhooks(r.policies.current())
			if !bytes.Equal(now, last) {
				r.log.Warn("the reloaded policies need other webhooks than before: the apiserver calls tollgate for what its static manifests say until they are written again (tollgate manifests --static, with the same --config, on every control-plane node)",
					slog.String("name", c.WebhookName))
			}
			last = now
		}
	})
}

// staticWebhooks is what the manifests of set hold apart from the address
// and CA, to tell whether a reload changed them.
func (r *replica) staticWebhooks(set *policy.Set) []byte {
	m, v, err := registration.Build(set, registration.Options{
		URL:                "https://tollgate.invalid",
		CABundle:           []byte("-"),
		ExcludedNamespaces: engine.New(set, engine.Options{OwnNamespace: r.cfg.Namespace, ExcludeNamespaces: r.cfg.ExcludeNamespaces}).Excluded(),
		TimeoutSeconds:     r.cfg.Cluster.WebhookTimeoutSeconds,
	})
	if err != nil {
		return []byte(err.Error())
	}
	out, err := registration.YAML(m, v)
	if err != nil {
		return []byte(err.Error())
	}
	return out
}

// warnAPIRegistered logs a warning for each configuration of the replica's
// name registered through the API. It only reads; without the right to,
// it says nothing.
func (r *replica) warnAPIRegistered(ctx context.Context, cl *cluster) {
	name := r.cfg.Cluster.WebhookName
	api := cl.client.AdmissionregistrationV1()
	var found []string
	if _, err := api.MutatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{}); err == nil {
		found = append(found, "MutatingWebhookConfiguration/"+name)
	} else if !apierrors.IsNotFound(err) {
		r.log.Debug("API-registered webhook configurations not checked", slog.Any("error", err))
		return
	}
	if _, err := api.ValidatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{}); err == nil {
		found = append(found, "ValidatingWebhookConfiguration/"+name)
	}
	if len(found) > 0 {
		r.log.Warn("webhook configurations of this name are also registered through the API: the apiserver calls tollgate for both, the static ones and these; delete these (tollgate uninstall --name "+name+")",
			slog.Any("configurations", found))
	}
}
