package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/tollgate-dev/tollgate/internal/audit"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/kubeclient"
	"github.com/tollgate-dev/tollgate/internal/params"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

type auditOptions struct {
	kubeconfig string
	config     string
	report     reportOptions
	namespace  string
	registry   registryFlags
	noFastPath bool
	// clusterPolicies: audit the cluster's own ValidatingAdmissionPolicies too.
	clusterPolicies bool
}

func newAuditCommand() *cobra.Command {
	o := auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit --kubeconfig FILE -c POLICIES",
		Short: "Evaluate the objects a cluster holds against policies: what would they break",
		Long: "Lists the cluster's objects of every resource the validating policies match and decides each\n" +
			"with the server's engine as a CREATE of the stored object, exceptions included. It only reads\n" +
			"(get and list). Policies whose verdict depends on the request (request.userInfo, oldObject,\n" +
			"authorizer) are reported as skip. With --cluster-policies it audits the ValidatingAdmissionPolicies\n" +
			"the cluster already runs too, with their bindings and params (only those, without -c). Exit\n" +
			"status: 0 nothing fails, 1 something fails, 2 usage, policy or cluster error.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster)")
	addFastPathFlag(f, &o.noFastPath)
	addRegistryFlags(f, &o.registry)
	f.StringVarP(&o.config, "config", "c", "", policyFlagHelp)
	o.report.addFlags(f, "an object")
	f.StringVar(&o.namespace, "namespace", "", "tollgate's own namespace, exempt like the system namespaces")
	f.BoolVar(&o.clusterPolicies, "cluster-policies", false, "also audit the cluster's own ValidatingAdmissionPolicies, as the apiserver runs them (needs get and list on validatingadmissionpolicies and validatingadmissionpolicybindings); without -c, only them")
	return cmd
}

func (o *auditOptions) run(cmd *cobra.Command) error {
	if err := o.report.validate(); err != nil {
		return err
	}
	set := &policy.Set{}
	if o.config != "" || !o.clusterPolicies {
		var err error
		if set, err = policy.Load(o.config); err != nil {
			return usageError(fmt.Errorf("load policies: %w", err))
		}
	}
	cfg, err := kubeclient.Config(o.kubeconfig)
	if err != nil {
		return usageError(err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return usageError(fmt.Errorf("cluster access: %w", err))
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return usageError(fmt.Errorf("cluster access: %w", err))
	}
	ctx := cmd.Context()
	if o.clusterPolicies {
		if set, err = withClusterPolicies(ctx, cmd.ErrOrStderr(), client, set); err != nil {
			return usageError(err)
		}
	}
	ext, err := auditParams(ctx, cfg, set)
	if err != nil {
		return usageError(err)
	}
	if len(set.References()) > 0 {
		ext.References = set.NewReferenceStore()
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
		for _, e := range audit.ListReferences(ctx, client, mapper, ext.References) {
			fmt.Fprintf(cmd.ErrOrStderr(), "tollgate audit: references: %v\n", e)
		}
	}
	resources, err := audit.Resources(disc, set)
	if err != nil {
		return usageError(err)
	}
	if len(resources) == 0 {
		return usageError(errors.New("the cluster serves no resource the validating policies match"))
	}
	namespaces, err := audit.Namespaces(ctx, client)
	if err != nil {
		return usageError(err)
	}
	images, err := o.registry.verifier()
	if err != nil {
		return usageError(err)
	}
	eng := engine.New(set, engine.Options{OwnNamespace: o.namespace, Namespaces: namespaces, External: ext, NoCELFastPath: o.noFastPath, Images: images})
	progress := newProgress(cmd.ErrOrStderr(), time.Now)
	findings, err := audit.Scan(ctx, client, eng, resources, progress.update)
	progress.done()
	if err != nil {
		return usageError(err)
	}
	out := cmd.OutOrStdout()
	if err := o.report.write(out, findings); err != nil {
		return err
	}
	return findingsExit(findings)
}

// withClusterPolicies adds the cluster's ValidatingAdmissionPolicies to
// set; those that cannot be read, and those tollgate's policies shadow
// (the same name), are named on stderr.
func withClusterPolicies(ctx context.Context, stderr io.Writer, client dynamic.Interface, set *policy.Set) (*policy.Set, error) {
	vaps, errs, err := audit.ClusterVAPs(ctx, client)
	if err != nil {
		return nil, err
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "tollgate audit: not audited: %v\n", e)
	}
	merged, shadowed := set.WithCluster(vaps)
	for _, name := range shadowed {
		fmt.Fprintf(stderr, "tollgate audit: the cluster's ValidatingAdmissionPolicy %q is not audited: -c has a policy of that name, audited instead\n", name)
	}
	if len(merged.Policies) == 0 {
		return nil, errors.New("the cluster has no ValidatingAdmissionPolicy, and no -c was given")
	}
	return merged, nil
}

// auditParams reads the params of the set's policies from the cluster
// (get, list, watch), as the server does; none without param kinds.
func auditParams(ctx context.Context, cfg *rest.Config, set *policy.Set) (external.Sources, error) {
	kinds := set.ParamKinds()
	if len(kinds) == 0 {
		return external.Sources{}, nil
	}
	store, err := params.NewCluster(ctx, cfg)
	if err != nil {
		return external.Sources{}, err
	}
	store.Use(kinds)
	wait, cancel := context.WithTimeout(ctx, paramsTimeout)
	defer cancel()
	if err := store.WaitSynced(wait); err != nil {
		return external.Sources{}, fmt.Errorf("params: %w", err)
	}
	return external.Sources{Params: store}, nil
}

// paramsTimeout bounds the wait for the params' first list.
const paramsTimeout = 30 * time.Second

// progress shows on a terminal, once a scan takes more than a moment, how
// far it has come, on one line it rewrites.
type progress struct {
	w       io.Writer
	now     func() time.Time
	start   time.Time
	shown   bool
	enabled bool
}

// progressDelay is how long a scan runs before it shows progress.
const progressDelay = 500 * time.Millisecond

func newProgress(w io.Writer, now func() time.Time) *progress {
	return &progress{w: w, now: now, start: now(), enabled: isTerminal(w)}
}

func (p *progress) update(s audit.Progress) {
	if !p.enabled || p.now().Sub(p.start) < progressDelay {
		return
	}
	p.shown = true
	fmt.Fprintf(p.w, "\r\x1b[Kaudit: %d/%d resources, %d objects (%s)", s.Done, s.Resources, s.Objects, s.Resource)
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
