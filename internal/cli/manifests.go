package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/registration"
)

type manifestsOptions struct {
	config           string
	url              string
	serviceName      string
	serviceNamespace string
	servicePort      int32
	caFile           string
	certDir          string
	namespace        string
	name             string
	timeoutSeconds   int32
	// excludeNamespaces and failurePolicy are serve's --exclude-namespaces
	// and --failure-policy, so that the printed webhooks match a replica's.
	excludeNamespaces []string
	failurePolicy     string
	// static is the manifest directory written instead of printing;
	// apiserverDir is that directory as the apiserver sees it, and
	// admissionKubeconfig the webhook plugins' kubeConfigFile.
	static, apiserverDir, admissionKubeconfig string
	// native prints the ValidatingAdmissionPolicies and
	// MutatingAdmissionPolicies the apiserver enforces by itself instead.
	native bool
}

func newManifestsCommand() *cobra.Command {
	o := manifestsOptions{}
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Print the webhook configurations for the loaded policies",
		Long: "Prints the MutatingWebhookConfiguration and ValidatingWebhookConfiguration that make the\n" +
			"apiserver call tollgate for exactly what the policies match.\n\n" +
			"With --static DIR, writes them instead as the apiserver's static admission manifests\n" +
			"(DIR/mutating/NAME.yaml, DIR/validating/NAME.yaml, named NAME.static.k8s.io, checked by the\n" +
			"apiserver's own loader first) and prints the AdmissionConfiguration that points the apiserver\n" +
			"at DIR (kube-apiserver --admission-control-config-file; 1.36 with the feature gate\n" +
			"ManifestBasedAdmissionControlConfig=true, 1.37 on by default). See docs/deploy.md.\n\n" +
			"With --native, prints instead the ValidatingAdmissionPolicies and MutatingAdmissionPolicies\n" +
			"(with bindings) the apiserver enforces by itself, even when tollgate is down, and says which\n" +
			"policies stay on the webhook and why. See docs/native.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.native {
				return o.runNative(cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if o.static != "" {
				return o.runStatic(cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if o.apiserverDir != "" || o.admissionKubeconfig != "" {
				return usageError(errors.New("--apiserver-static-dir and --admission-kubeconfig go with --static"))
			}
			mutating, validating, err := o.build()
			if err != nil {
				return err
			}
			out, err := registration.YAML(mutating, validating)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", policyFlagHelp)
	f.StringVar(&o.url, "url", "", "tollgate's base URL, https://HOST:PORT (clientConfig.url)")
	f.StringVar(&o.serviceName, "service-name", "", "tollgate's Service (clientConfig.service)")
	f.StringVar(&o.serviceNamespace, "service-namespace", "", "the Service's namespace")
	f.Int32Var(&o.servicePort, "service-port", 443, "the Service's port")
	f.StringVar(&o.caFile, "ca-file", "", "PEM CA bundle for the webhooks (default: the CA in --cert-dir)")
	f.StringVar(&o.certDir, "cert-dir", defaultCertDir(), "self-signed certificate directory of tollgate serve")
	f.StringVar(&o.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "tollgate's own namespace, excluded from every webhook (default: --service-namespace, then $POD_NAMESPACE)")
	f.StringVar(&o.name, "name", "tollgate", "name of the webhook configurations")
	f.StringSliceVar(&o.excludeNamespaces, "exclude-namespaces", nil, "more namespaces left out of every webhook, as tollgate serve --exclude-namespaces")
	f.StringVar(&o.failurePolicy, "failure-policy", "", "Fail or Ignore for every webhook, replacing each policy's failurePolicy (default: each policy's)")
	f.Int32Var(&o.timeoutSeconds, "timeout-seconds", 5, "how long the apiserver waits for an answer (1-30)")
	f.BoolVar(&o.native, "native", false, "print instead what the apiserver enforces by itself: ValidatingAdmissionPolicies and MutatingAdmissionPolicies with their bindings, compiled from the policies; says on stderr which stay on the webhook, and why")
	f.StringVar(&o.static, "static", "", "write the configurations into this directory as the apiserver's static manifests, and print the AdmissionConfiguration that reads them (needs --url)")
	f.StringVar(&o.apiserverDir, "apiserver-static-dir", "", "with --static: the directory as the apiserver sees it, an absolute path (default: --static made absolute)")
	f.StringVar(&o.admissionKubeconfig, "admission-kubeconfig", "", "with --static: the kubeConfigFile the apiserver's webhook plugins already use (client credentials for webhooks), kept in the printed configuration")
	return cmd
}

// build returns the configurations for the loaded policies.
func (o *manifestsOptions) build() (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	set, err := policy.Load(o.config)
	if err != nil {
		return nil, nil, fmt.Errorf("load policies: %w", err)
	}
	caFile := o.caFile
	if caFile == "" {
		caFile = filepath.Join(o.certDir, certs.CAFile)
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && o.caFile == "" {
			return nil, nil, fmt.Errorf("no CA at %s: run tollgate serve once with the same --cert-dir, or give --ca-file", caFile)
		}
		return nil, nil, fmt.Errorf("CA bundle: %w", err)
	}
	own := o.ownNamespace()
	opts := registration.Options{
		Name:               o.name,
		URL:                o.url,
		CABundle:           ca,
		TimeoutSeconds:     o.timeoutSeconds,
		ExcludedNamespaces: engine.New(set, engine.Options{OwnNamespace: own, ExcludeNamespaces: o.excludeNamespaces}).Excluded(),
		FailurePolicy:      admissionregistrationv1.FailurePolicyType(o.failurePolicy),
	}
	if o.serviceName != "" || o.serviceNamespace != "" {
		opts.Service = &registration.Service{Name: o.serviceName, Namespace: o.serviceNamespace, Port: o.servicePort}
	}
	return registration.Build(set, opts)
}

// ownNamespace is tollgate's namespace: --service-namespace, else --namespace.
func (o *manifestsOptions) ownNamespace() string {
	if o.serviceNamespace != "" {
		return o.serviceNamespace
	}
	return o.namespace
}
