package backgroundaudit

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"
)

// Writes to the apiserver, across namespaces: a token bucket, and how
// many namespaces are written at once (one namespace is never written by
// two at a time: the queue hands each out once).
const (
	writesPerSecond = 20
	writeBurst      = 50
	writers         = 4
)

// flusher writes the reports of namespaces whose results changed: each
// namespace at most once per interval, however often its objects change,
// and all of them within a global rate. It waits while a full evaluation
// is under way, so that reports are not written half-done.
type flusher struct {
	a        *auditor
	queue    workqueue.TypedDelayingInterface[string]
	interval time.Duration
	bucket   flowcontrol.RateLimiter
	// retry spaces out the writes of a namespace that keep failing.
	retry workqueue.TypedRateLimiter[string]

	mu   sync.Mutex
	last map[string]time.Time
}

func newFlusher(a *auditor, interval time.Duration) *flusher {
	return &flusher{
		a: a, interval: interval,
		queue:  workqueue.NewTypedDelayingQueue[string](),
		bucket: flowcontrol.NewTokenBucketRateLimiter(writesPerSecond, writeBurst),
		retry:  workqueue.NewTypedItemExponentialFailureRateLimiter[string](interval, 5*time.Minute),
		last:   map[string]time.Time{},
	}
}

// mark asks for a namespace's reports to be written: now, or once its
// interval since the last write has passed. Marks meanwhile are one write.
func (f *flusher) mark(namespace string) {
	f.mu.Lock()
	due := f.last[namespace].Add(f.interval)
	f.mu.Unlock()
	f.queue.AddAfter(namespace, time.Until(due))
}

func (f *flusher) run(ctx context.Context) {
	for {
		ns, shutdown := f.queue.Get()
		if shutdown {
			return
		}
		f.write(ctx, ns)
		f.queue.Done(ns)
	}
}

func (f *flusher) write(ctx context.Context, ns string) {
	if !f.a.ready.Load() {
		f.queue.AddAfter(ns, 100*time.Millisecond)
		return
	}
	if err := f.bucket.Wait(ctx); err != nil {
		return
	}
	f.mu.Lock()
	f.last[ns] = time.Now()
	f.mu.Unlock()
	findings := f.a.results.findings(ns)
	start := time.Now()
	writes, err := f.a.cfg.Reports.Sync(ctx, ns, findings)
	if err != nil {
		if ctx.Err() == nil {
			wait := f.retry.When(ns)
			f.a.cfg.Log.Error("background audit: reports not written", slog.String("namespace", ns), slog.Duration("retry", wait), slog.Any("error", err))
			f.queue.AddAfter(ns, wait)
		}
		return
	}
	f.retry.Forget(ns)
	if writes > 0 {
		f.a.cfg.Log.Debug("background audit: reports written", slog.String("namespace", ns), slog.Int("objects", len(findings)), slog.Int("writes", writes), slog.Duration("took", time.Since(start)))
	}
	counts := map[string]int{}
	for outcome, n := range f.a.results.counts() {
		counts[string(outcome)] = n
	}
	f.a.cfg.Metrics.BackgroundAuditResults(counts)
}
