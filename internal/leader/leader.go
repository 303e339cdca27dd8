// Package leader elects one replica, through a coordination.k8s.io Lease, to
// do what must be done once: write certificates and webhook configurations.
// Every replica serves reviews whether it leads or not.
package leader

import (
	"context"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config names the Lease and sets its timing.
type Config struct {
	Client        kubernetes.Interface
	Namespace     string
	Name          string
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	Log           *slog.Logger
}

func (c *Config) defaults() {
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = 15 * time.Second
	}
	if c.RenewDeadline <= 0 {
		c.RenewDeadline = c.LeaseDuration * 2 / 3
	}
	if c.RetryPeriod <= 0 {
		c.RetryPeriod = c.LeaseDuration / 7
	}
}

// Run takes part in the election until ctx ends. lead runs while this
// replica leads, with a context that ends when leadership is lost; after a
// loss the replica stands for election again.
func Run(ctx context.Context, cfg Config, lead func(ctx context.Context)) {
	cfg.defaults()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name},
		Client:     cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
	}
	for ctx.Err() == nil {
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   cfg.LeaseDuration,
			RenewDeadline:   cfg.RenewDeadline,
			RetryPeriod:     cfg.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            cfg.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					cfg.Log.Info("leading", slog.String("lease", cfg.Namespace+"/"+cfg.Name), slog.String("identity", cfg.Identity))
					lead(ctx)
				},
				OnStoppedLeading: func() {
					cfg.Log.Info("not leading", slog.String("identity", cfg.Identity))
				},
				OnNewLeader: func(id string) {
					if id != cfg.Identity {
						cfg.Log.Info("leader elected", slog.String("leader", id))
					}
				},
			},
		})
	}
}
