package replica

import (
	"context"
	"fmt"
	"log/slog"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/internal/backgroundaudit"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policyreport"
)

// backgroundAudit has the leader audit the cluster's stored objects into
// reports, following policy reloads; the other replicas do nothing of it.
func (r *replica) backgroundAudit(ctx context.Context, cl *cluster, opts engine.Options) error {
	c := &r.cfg.Cluster
	if !c.BackgroundAudit {
		return nil
	}
	api := policyreport.DefaultAPI()
	if c.ReportsAPI != "" {
		var err error
		if api, err = policyreport.ParseAPI(c.ReportsAPI); err != nil {
			return &ConfigError{Err: fmt.Errorf("--reports-api: %w", err)}
		}
	}
	// The flusher rate-limits report writes itself; discovery and the
	// initial lists must not wait on client-go's default 5 requests/s.
	restCfg := rest.CopyConfig(cl.config)
	restCfg.QPS, restCfg.Burst = 50, 100
	client, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("background audit: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("background audit: %w", err)
	}
	cfg := backgroundaudit.Config{
		Client:        client,
		Discovery:     disc,
		Reports:       policyreport.NewWriter(client, api, policyreport.Options{Log: r.log, OnWrite: r.met.BackgroundAuditWrite}),
		Policies:      r.policies.current,
		Changed:       r.policies.changes(),
		Engine:        opts,
		WriteInterval: c.AuditWriteInterval, RescanInterval: c.AuditRescanInterval,
		ClusterPolicies: c.AuditClusterPolicies,
		Log:             r.log,
		Metrics:         r.met,
	}
	r.lead(func(ctx context.Context) {
		if err := backgroundaudit.Run(ctx, cfg); err != nil && ctx.Err() == nil {
			r.log.Error("background audit stopped", slog.Any("error", err))
		}
	})
	return nil
}
