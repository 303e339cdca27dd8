package replica

import (
	"context"
	"fmt"
	"os"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/leader"
	"github.com/tollgate-dev/tollgate/internal/registration"
)

// registerWithFiles has the leader keep the webhook configurations of a
// replica that serves certificate files (its own, or cert-manager's).
func (r *replica) registerWithFiles(ctx context.Context, cl *cluster, source string) error {
	c := &r.cfg.Cluster
	if !c.Register {
		return nil
	}
	syncer := r.syncer(cl)
	switch {
	case c.FailurePolicy != "" && c.FailurePolicy != "Fail" && c.FailurePolicy != "Ignore":
		return configError(fmt.Sprintf("--failure-policy %q: want Fail or Ignore", c.FailurePolicy))
	case source == CertSourceCertManager && c.InjectCAFrom == "":
		return configError("--cert-source=cert-manager needs --inject-ca-from NAMESPACE/CERTIFICATE")
	case source == CertSourceFiles:
		if c.CAFile == "" {
			return configError("registering with --cert-source=files needs --ca-file (or --register=false)")
		}
		ca, err := os.ReadFile(c.CAFile)
		if err != nil {
			return fmt.Errorf("--ca-file: %w", err)
		}
		syncer.Options.CABundle = ca
	}
	r.lead(func(ctx context.Context) { syncer.Run(ctx, r.policies.kick) })
	return nil
}

// syncer keeps the webhook configurations of the current policy set.
func (r *replica) syncer(cl *cluster) *registration.Syncer {
	c := &r.cfg.Cluster
	set := r.policies.current()
	return &registration.Syncer{
		Client:   cl.client,
		Policies: r.policies.current,
		Options: registration.Options{
			Name:               c.WebhookName,
			Service:            &registration.Service{Name: c.ServiceName, Namespace: r.cfg.Namespace, Port: c.ServicePort},
			TimeoutSeconds:     c.WebhookTimeoutSeconds,
			ExcludedNamespaces: engine.New(set, engine.Options{OwnNamespace: r.cfg.Namespace, ExcludeNamespaces: r.cfg.ExcludeNamespaces}).Excluded(),
			FailurePolicy:      admissionregistrationv1.FailurePolicyType(c.FailurePolicy),
			CAInjectFrom:       c.InjectCAFrom,
		},
		Log:    r.log,
		Resync: c.RegistrationResync,
	}
}

// lead has work run on the leader only, or on this replica when election
// is off, until ctx ends; startLeading starts them all under one Lease.
func (r *replica) lead(work func(ctx context.Context)) {
	r.leading = append(r.leading, work)
}

// startLeading runs every leader's work, each in its own goroutine, while
// this replica holds the Lease (always, when election is off), until ctx
// ends; the Lease is released then.
func (r *replica) startLeading(ctx context.Context, cl *cluster) {
	c := &r.cfg.Cluster
	works := r.leading
	if cl == nil || len(works) == 0 {
		return
	}
	run := func(ctx context.Context) {
		r.met.Leading(true)
		defer r.met.Leading(false)
		var wg sync.WaitGroup
		for _, work := range works {
			wg.Go(func() { work(ctx) })
		}
		wg.Wait()
	}
	if !c.LeaderElect {
		r.group.Go(func() error { run(ctx); return nil })
		return
	}
	id, _ := os.Hostname()
	if pod := os.Getenv("POD_NAME"); pod != "" {
		id = pod
	}
	id = fmt.Sprintf("%s_%d", id, os.Getpid())
	r.group.Go(func() error {
		leader.Run(ctx, leader.Config{
			Client: cl.client, Namespace: r.cfg.Namespace, Name: c.LeaseName, Identity: id,
			LeaseDuration: c.LeaseDuration, RenewDeadline: c.RenewDeadline, RetryPeriod: c.RetryPeriod, Log: r.log,
		}, run)
		return nil
	})
}
