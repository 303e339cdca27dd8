package replica

import (
	"errors"
	"log/slog"
	"time"

	"github.com/tollgate-dev/tollgate/internal/imageverify"
)

// Where a replica's serving certificate comes from.
const (
	// CertSourceFiles serves certificate files, or a self-signed pair kept
	// in Config.CertDir when none are given.
	CertSourceFiles = "files"
	// CertSourceSelf keeps a CA and serving certificate in a Secret, which
	// the leader rotates and every replica serves from.
	CertSourceSelf = "self"
	// CertSourceCertManager serves files cert-manager writes and registers
	// the webhooks for cert-manager's CA injection.
	CertSourceCertManager = "cert-manager"
)

// How the apiserver comes to call a replica.
const (
	// RegistrationAPI: webhook configurations kept through the API (the
	// leader creates and repairs them when ClusterConfig.Register is set).
	RegistrationAPI = "api"
	// RegistrationStatic: the webhook configurations are the apiserver's
	// static manifests (tollgate manifests --static); a replica never
	// writes configurations through the API, and serves only certificates
	// signed by a CA of the manifests' caBundle (ClusterConfig.CAFile).
	RegistrationStatic = "static"
)

// Config is everything a replica is run with. `tollgate serve` fills it
// from its flags, whose defaults are the ones that matter; a zero duration
// here means the component's own default, or for PolicyReloadInterval no
// reload.
type Config struct {
	// Listen is the HTTPS address of the review and health paths.
	Listen string
	// CertFile and KeyFile are the serving certificate files; reloaded
	// every CertReloadInterval.
	CertFile, KeyFile  string
	CertReloadInterval time.Duration
	// CertDir keeps a self-signed CA and serving certificate when no files
	// are given and there is no cluster access; DNSNames are added to that
	// certificate (and to a Secret-kept one).
	CertDir  string
	DNSNames []string
	// ClientCAFile, when set, holds the CAs whose client certificates alone
	// may send reviews.
	ClientCAFile string
	// HTTP2 offers HTTP/2 on the listener.
	HTTP2 bool

	// Policies is a policy file or directory; empty: the embedded defaults.
	Policies string
	// PolicyReloadInterval is how often Policies is checked for changes.
	PolicyReloadInterval time.Duration
	// Namespace is tollgate's own, never injected nor validated; required
	// with cluster access.
	Namespace string
	// ExcludeNamespaces are never injected nor validated either, and are left
	// out of every generated webhook.
	ExcludeNamespaces []string
	// NoCELFastPath: every CEL program decides on its tracked (reference)
	// path (engine.Options.NoCELFastPath, --cel-fast-path=false).
	NoCELFastPath bool
	// Registries is how verifyImages policies reach registries; one
	// verifier (and its cache) serves the replica's life, across reloads.
	Registries imageverify.Registries
	// PullSecrets: registries are reached with each workload's pull
	// credentials (its imagePullSecrets and its ServiceAccount's), read by
	// name through the cluster (--registry-credentials=pull-secrets).
	PullSecrets bool

	// DrainDelay and ShutdownTimeout bound shutdown (server.Config).
	DrainDelay, ShutdownTimeout time.Duration
	// MetricsListen is the plain-HTTP /metrics address; empty: none.
	MetricsListen string
	// Profiling serves Go's profiles under /debug/pprof/ on MetricsListen.
	Profiling bool
	// Logger gets every log line; nil: slog.Default().
	Logger *slog.Logger

	// Cluster configures what a replica does with cluster access.
	Cluster ClusterConfig
}

// ClusterConfig is what a replica with cluster access keeps there.
type ClusterConfig struct {
	// Kubeconfig gives cluster access; empty: in-cluster when in a Pod.
	Kubeconfig string
	// CertSource is CertSourceFiles, CertSourceSelf or
	// CertSourceCertManager; empty: files without cluster access or with
	// certificate files, self otherwise.
	CertSource string
	// ServiceName and ServicePort are the Service the apiserver calls.
	ServiceName string
	ServicePort int32
	// SecretName is the Secret of CertSourceSelf.
	SecretName string
	// FailurePolicy, Fail or Ignore, replaces every policy's own in the
	// webhook configurations kept; empty: each policy's.
	FailurePolicy string
	// WebhookName names the webhook configurations kept.
	WebhookName string
	// CAFile is the CA bundle registered with CertSourceFiles; with
	// RegistrationStatic, the static manifests' caBundle, with any source.
	CAFile string
	// InjectCAFrom is NAMESPACE/CERTIFICATE for CertSourceCertManager.
	InjectCAFrom string
	// Register creates and keeps the webhook configurations.
	Register bool
	// Registration is RegistrationAPI or RegistrationStatic; empty: API.
	Registration          string
	WebhookTimeoutSeconds int32
	// RegistrationResync is how often they are applied without an event.
	RegistrationResync time.Duration
	// LeaderElect limits certificate and registration writes to the Lease
	// holder; off, this replica writes.
	LeaderElect                               bool
	LeaseName                                 string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// CALifetime, CertLifetime and CAOverlap shape CertSourceSelf's
	// certificates; CertCheckInterval is how often they are checked.
	CALifetime, CertLifetime, CAOverlap time.Duration
	CertCheckInterval                   time.Duration
	// BackgroundAudit has the leader evaluate the stored objects the
	// validating policies match and keep the results as reports of
	// ReportsAPI (policyreport.ParseAPI; empty: policyreport.DefaultAPI),
	// each namespace's written at most once per AuditWriteInterval, all
	// evaluated again every AuditRescanInterval. AuditClusterPolicies
	// has it audit the cluster's own ValidatingAdmissionPolicies too.
	BackgroundAudit, AuditClusterPolicies   bool
	ReportsAPI                              string
	AuditWriteInterval, AuditRescanInterval time.Duration
}

// ConfigError is a Config that cannot run: missing or contradictory
// settings, unreadable files named by it. Its message is the cause's.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configError(msg string) error { return &ConfigError{Err: errors.New(msg)} }

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// kubeconfigNeeded: the certificate sources that live in the cluster.
func (c *Config) kubeconfigNeeded() bool {
	return c.Cluster.CertSource == CertSourceSelf || c.Cluster.CertSource == CertSourceCertManager || c.PullSecrets
}

// certSource resolves the default: certificate files or no cluster mean
// files (self-signed in CertDir without files); in a cluster, self.
func (c *Config) certSource(inCluster bool) string {
	switch {
	case c.Cluster.CertSource != "":
		return c.Cluster.CertSource
	case c.CertFile != "" || c.KeyFile != "" || !inCluster:
		return CertSourceFiles
	default:
		return CertSourceSelf
	}
}
