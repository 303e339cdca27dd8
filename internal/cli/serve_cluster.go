package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/replica"
	"github.com/tollgate-dev/tollgate/internal/report"
)

// clusterFlags are serve's flags for running with cluster access.
func clusterFlags(f *pflag.FlagSet, c *replica.ClusterConfig) {
	f.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig for cluster access (default: in-cluster when running in a Pod)")
	f.StringVar(&c.CertSource, "cert-source", "", "files, self (a CA and certificate kept in a Secret; default with cluster access) or cert-manager")
	f.StringVar(&c.ServiceName, "service-name", "tollgate", "the Service the apiserver calls tollgate through")
	f.Int32Var(&c.ServicePort, "service-port", 443, "the Service's port")
	f.StringVar(&c.SecretName, "secret-name", "tollgate-certs", "Secret holding the self-managed CA and serving certificate")
	f.StringVar(&c.WebhookName, "webhook-config-name", "tollgate", "name of the webhook configurations tollgate keeps")
	f.StringVar(&c.FailurePolicy, "failure-policy", "", "Fail or Ignore for every registered webhook, replacing each policy's failurePolicy (default: each policy's)")
	f.StringVar(&c.CAFile, "ca-file", "", "with --cert-source=files and cluster access: the CA bundle to register; with --registration=static: the static manifests' caBundle")
	f.StringVar(&c.InjectCAFrom, "inject-ca-from", "", "with --cert-source=cert-manager: NAMESPACE/CERTIFICATE whose CA cert-manager injects")
	f.BoolVar(&c.Register, "register", true, "with cluster access: create and keep the webhook configurations")
	f.StringVar(&c.Registration, "registration", replica.RegistrationAPI, "api: webhook configurations kept through the API (--register); static: they are the apiserver's static manifests (tollgate manifests --static), never written through the API, and only certificates signed by --ca-file are served")
	f.Int32Var(&c.WebhookTimeoutSeconds, "webhook-timeout-seconds", 5, "timeoutSeconds of the registered webhooks")
	f.BoolVar(&c.LeaderElect, "leader-elect", true, "with cluster access: only the Lease holder writes certificates and configurations")
	f.StringVar(&c.LeaseName, "lease-name", "tollgate-leader", "the leader election Lease")
	f.DurationVar(&c.LeaseDuration, "lease-duration", 15*time.Second, "how long a lost leader keeps the Lease")
	f.DurationVar(&c.RenewDeadline, "lease-renew-deadline", 10*time.Second, "how long the leader tries to renew before giving up")
	f.DurationVar(&c.RetryPeriod, "lease-retry-period", 2*time.Second, "how often candidates try to take the Lease")
	f.DurationVar(&c.CALifetime, "ca-lifetime", certs.CALifetime, "lifetime of a self-managed CA")
	f.DurationVar(&c.CertLifetime, "cert-lifetime", 90*24*time.Hour, "lifetime of a self-managed serving certificate")
	f.DurationVar(&c.CAOverlap, "ca-overlap", time.Minute, "how long a new CA is trusted before it signs (CA rotation)")
	f.DurationVar(&c.CertCheckInterval, "cert-check-interval", 30*time.Second, "how often the leader checks the certificates, and every replica re-reads the Secret while its certificate is due for renewal")
	f.BoolVar(&c.BackgroundAudit, "background-audit", true, "with cluster access: the leader evaluates the stored objects the validating policies match and keeps the results as reports")
	f.BoolVar(&c.AuditClusterPolicies, "audit-cluster-policies", true, "with --background-audit: audit the cluster's own ValidatingAdmissionPolicies too (their bindings and params), as the apiserver would run them; needs get, list and watch on validatingadmissionpolicies and validatingadmissionpolicybindings")
	f.StringVar(&c.ReportsAPI, "reports-api", string(report.DefaultFormat()), "the background audit's report API: "+report.FormatFlagHelp)
	f.DurationVar(&c.AuditWriteInterval, "audit-write-interval", 2*time.Second, "the least time between two writes of a namespace's reports")
	f.DurationVar(&c.AuditRescanInterval, "audit-rescan-interval", 10*time.Minute, "how often the background audit evaluates every object again, catching what a watch missed")
	f.DurationVar(&c.RegistrationResync, "registration-resync", time.Minute, "how often the leader re-applies the webhook configurations without an event")
}
