// Package leader elects one replica, through a coordination.k8s.io Lease, to
// do what must be done once: write certificates and webhook configurations.
// Every replica serves reviews whether it leads or not.
package leader

import (
	"context"
	"log/slog"
	"sync"
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
// replica leads, with a context that ends when leadership is lost or ctx
// ends; after a loss the replica stands for election again. The Lease is
// released, and Run returns or stands again, only after lead has returned:
// no two replicas lead at once.
func Run(ctx context.Context, cfg Config, lead func(ctx context.Context)) {
	cfg.defaults()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name},
		Client:     cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
	}
	for ctx.Err() == nil {
		// client-go runs OnStartedLeading in a goroutine it does not wait
		// for, and with ReleaseOnCancel releases the Lease as soon as the
		// election's context ends. So the election gets a context of its own,
		// ended once lead has returned.
		election, stopElection := context.WithCancel(context.WithoutCancel(ctx))
		var l leading
		stop := context.AfterFunc(ctx, func() {
			l.wait()
			stopElection()
		})
		leaderelection.RunOrDie(election, leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   cfg.LeaseDuration,
			RenewDeadline:   cfg.RenewDeadline,
			RetryPeriod:     cfg.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            cfg.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(leaderCtx context.Context) {
					done := l.start()
					if done == nil {
						return // stopping already
					}
					defer close(done)
					leadCtx, cancel := context.WithCancel(leaderCtx)
					defer cancel()
					defer context.AfterFunc(ctx, cancel)()
					cfg.Log.Info("leading", slog.String("lease", cfg.Namespace+"/"+cfg.Name), slog.String("identity", cfg.Identity))
					lead(leadCtx)
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
		stop()
		l.wait()
		stopElection()
	}
}

// leading tracks the one run of lead of an election.
type leading struct {
	mu       sync.Mutex
	stopping bool
	done     chan struct{} // closed when lead returns; nil if it never started
}

// start returns the channel to close when lead returns, or nil when the
// election is stopping and lead must not run.
func (l *leading) start() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopping {
		return nil
	}
	l.done = make(chan struct{})
	return l.done
}

// wait stops any later start and waits for a running lead to return.
func (l *leading) wait() {
	l.mu.Lock()
	l.stopping = true
	done := l.done
	l.mu.Unlock()
	if done != nil {
		<-done
	}
}
