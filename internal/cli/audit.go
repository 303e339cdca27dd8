package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/tollgate-dev/tollgate/internal/audit"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/kubeclient"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

type auditOptions struct {
	kubeconfig string
	config     string
	report     reportOptions
	namespace  string
	noFastPath bool
}

func newAuditCommand() *cobra.Command {
	o := auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit --kubeconfig FILE -c POLICIES",
		Short: "Evaluate the objects a cluster holds against policies: what would they break",
		Long: "Lists the cluster's objects of every resource the validating policies match and decides each\n" +
			"with the server's engine as a CREATE of the stored object, exceptions included. It only reads\n" +
			"(get and list). Policies whose verdict depends on the request (request.userInfo, oldObject,\n" +
			"authorizer) are reported as skip. Exit status: 0 nothing fails, 1 something fails, 2 usage,\n" +
			"policy or cluster error.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster)")
	addFastPathFlag(f, &o.noFastPath)
	f.StringVarP(&o.config, "config", "c", "", policyFlagHelp)
	o.report.addFlags(f, "an object")
	f.StringVar(&o.namespace, "namespace", "", "tollgate's own namespace, exempt like the system namespaces")
	return cmd
}

func (o *auditOptions) run(cmd *cobra.Command) error {
	if err := o.report.validate(); err != nil {
		return err
	}
	set, err := policy.Load(o.config)
	if err != nil {
		return usageError(fmt.Errorf("load policies: %w", err))
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
	eng := engine.New(set, engine.Options{OwnNamespace: o.namespace, Namespaces: namespaces, NoCELFastPath: o.noFastPath})
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
