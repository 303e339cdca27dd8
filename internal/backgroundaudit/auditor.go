// Package backgroundaudit owns the leader's background audit: it watches
// every resource kind the loaded validating policies match (tollgate
// policies and ValidatingAdmissionPolicies alike), and Namespaces for
// their labels, evaluates each stored object with the engine as a CREATE
// of it (audit.Evaluate), keeps the latest results per object, and writes
// each namespace's results as its reports, rate-limited, only when they
// change. A changed object is evaluated again alone; a reloaded policy set
// starts and stops informers and evaluates everything again; an exception
// that expires is applied nowhere from its expiresAt on, without any
// object changing; a periodic rescan catches what a watch missed. With
// Config.ClusterPolicies it audits the cluster's own
// ValidatingAdmissionPolicies too (clusterpolicies.go).
package backgroundaudit

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/tollgate-dev/tollgate/internal/audit"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/metrics"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Reports keeps the reports of each namespace ("" is cluster scope):
// policyreport.Writer.
type Reports interface {
	// Sync makes a namespace's reports hold the findings, writing only
	// what differs; no findings delete them.
	Sync(ctx context.Context, namespace string, findings []offline.Finding) (int, error)
	// Existing are the namespaces that hold tollgate's reports.
	Existing(ctx context.Context) (map[string]int, error)
}

// Config is what a background audit runs with.
type Config struct {
	Client    dynamic.Interface
	Discovery discovery.DiscoveryInterface
	Reports   Reports
	// Policies is the current policy set; Changed tells it was replaced.
	Policies func() *policy.Set
	Changed  <-chan struct{}
	// Engine are the admission engine's options; Namespaces is replaced
	// by the audit's own namespace informer.
	Engine engine.Options
	// WriteInterval is the least time between two writes of a
	// namespace's reports; RescanInterval how often everything is
	// evaluated again.
	WriteInterval, RescanInterval time.Duration
	// ClusterPolicies: audit the cluster's own ValidatingAdmissionPolicies
	// too, with their bindings and params (--audit-cluster-policies).
	ClusterPolicies bool
	// Workers evaluate objects in parallel.
	Workers int
	Log     *slog.Logger
	Metrics *metrics.Metrics
}

func (c *Config) defaults() {
	if c.WriteInterval <= 0 {
		c.WriteInterval = 2 * time.Second
	}
	if c.RescanInterval <= 0 {
		c.RescanInterval = 10 * time.Minute
	}
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = metrics.New()
	}
}

// state is what objects are evaluated with: replaced whole on reload.
type state struct {
	set     *policy.Set
	eng     *engine.Engine
	depends map[string]string
}

type auditor struct {
	cfg     Config
	results *results
	objects workqueue.TypedInterface[string]
	// inflight counts objects being evaluated, taken from objects.
	inflight atomic.Int64
	state    atomic.Pointer[state]
	flush    *flusher
	// ready: a full evaluation is done; reports may be written.
	ready atomic.Bool

	mu         sync.Mutex
	watching   map[schema.GroupVersionResource]*watched
	namespaces *watched
	// cut is what the informers drop from the objects they hold (strip.go).
	cut strip

	// cluster watches the cluster's VAPs (Config.ClusterPolicies), else nil.
	cluster *clusterPolicies
	// readKinds are the kinds of params and referenced objects changed
	// since the loop last looked (dependents.go), readSignal tells it of
	// them.
	readMu     sync.Mutex
	readKinds  map[schema.GroupVersionKind]bool
	readSignal chan struct{}
}

// Delays that gather a burst of changes into one pass: of the cluster's
// VAPs and bindings (a reload), of params and referenced objects (their
// policies' objects).
const (
	clusterPolicyDelay = 200 * time.Millisecond
	readDelay          = 500 * time.Millisecond
)

var namespacesResource = audit.Resource{GVR: corev1.SchemeGroupVersion.WithResource("namespaces"), Kind: "Namespace"}

// Run audits until ctx ends: on the leader only.
func Run(ctx context.Context, cfg Config) error {
	cfg.defaults()
	if cfg.Reports == nil {
		return errNoReports
	}
	a := &auditor{cfg: cfg, results: newResults(), objects: workqueue.NewTyped[string](), watching: map[schema.GroupVersionResource]*watched{},
		readKinds: map[schema.GroupVersionKind]bool{}, readSignal: make(chan struct{}, 1)}
	a.flush = newFlusher(a, cfg.WriteInterval)
	defer a.stopAll()
	defer a.objects.ShutDown()
	defer a.flush.queue.ShutDown()
	existing, err := cfg.Reports.Existing(ctx)
	if err != nil {
		cfg.Log.Error("background audit: cannot read the existing reports; those of namespaces without findings now are left alone", slog.Any("error", err))
	} else {
		cfg.Log.Info("background audit: resuming from the existing reports", slog.Int("namespaces", len(existing)))
	}
	for range cfg.Workers {
		go a.work(ctx)
	}
	for range writers {
		go a.flush.run(ctx)
	}
	var clusterChanged <-chan struct{}
	if cfg.ClusterPolicies {
		c, err := a.watchClusterPolicies(ctx)
		if err != nil {
			return err
		}
		defer c.stop()
		a.cluster, clusterChanged = c, c.changed
		if err := waitUntil(ctx, c.settled); err != nil {
			return err
		}
	}
	if store := cfg.Engine.External.Params; store != nil {
		defer store.OnChange(a.readChanged)()
		defer store.UseFor(paramsUser, nil)
	}
	if store := cfg.Engine.External.References; store != nil {
		defer store.OnChange(a.readChanged)()
	}
	if err := a.reload(ctx); err != nil {
		return err
	}
	for ns := range existing {
		if !a.results.has(ns) {
			a.flush.mark(ns)
		}
	}
	rescan := time.NewTicker(cfg.RescanInterval)
	defer rescan.Stop()
	expiry := time.NewTimer(0)
	<-expiry.C
	a.scheduleExpiry(expiry)
	lastExpiry := time.Now()
	var clusterDelay, readDelayed <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-cfg.Changed:
			if err := a.reload(ctx); err != nil {
				return err
			}
			a.scheduleExpiry(expiry)
		case <-clusterChanged:
			if clusterDelay == nil {
				clusterDelay = time.After(clusterPolicyDelay)
			}
		case <-clusterDelay:
			clusterDelay = nil
			cfg.Log.Info("background audit: the cluster's ValidatingAdmissionPolicies or bindings changed")
			if err := a.reload(ctx); err != nil {
				return err
			}
		case <-a.readSignal:
			if readDelayed == nil {
				readDelayed = time.After(readDelay)
			}
		case <-readDelayed:
			readDelayed = nil
			a.enqueueReaders()
		case <-rescan.C:
			a.enqueueAll()
		case <-expiry.C:
			st := a.state.Load()
			now := time.Now()
			gone := expired(st.set.Exceptions, now)
			keys := a.results.exemptedBy(gone)
			if kyvernoExpiredBetween(st.set.Exceptions, lastExpiry, now) {
				// a Kyverno exception's values may have changed any result of its policies
				cfg.Log.Info("background audit: a Kyverno PolicyException expired; everything is evaluated again")
				a.enqueueAll()
			}
			lastExpiry = now
			if len(keys) > 0 {
				cfg.Log.Info("background audit: exceptions expired; the objects they exempted are evaluated again", slog.Any("exceptions", keysOf(gone)), slog.Int("objects", len(keys)))
			}
			for _, k := range keys {
				a.objects.Add(k)
			}
			a.scheduleExpiry(expiry)
		}
	}
}

// scheduleExpiry sets the timer to the next expiresAt of the loaded
// exceptions, a moment after it so that the exception is expired then.
func (a *auditor) scheduleExpiry(t *time.Timer) {
	now := time.Now()
	if next, ok := nextExpiry(a.state.Load().set.Exceptions, now); ok {
		t.Reset(next.Sub(now) + 50*time.Millisecond)
	}
}

// reload evaluates everything with the current policy set: informers for
// the kinds it matches started, the others stopped and their results
// dropped; reports wait until every object has been evaluated.
func (a *auditor) reload(ctx context.Context) error {
	start := time.Now()
	a.ready.Store(false)
	set := a.cfg.Policies()
	if a.cluster != nil {
		// A change signalled until now is in what merge reads now: the
		// informers' first adds, above all, which would otherwise have the
		// first pass done twice.
		select {
		case <-a.cluster.changed:
		default:
		}
		set = a.cluster.merge(a, set)
	}
	a.followParams(ctx, set)
	resources, err := audit.Resources(a.cfg.Discovery, set)
	if err != nil {
		a.cfg.Log.Error("background audit: some resources could not be discovered; their objects are not audited", slog.Any("error", err))
	}
	opts := a.cfg.Engine
	opts.Namespaces = a.namespace
	a.state.Store(&state{set: set, eng: engine.New(set, opts), depends: audit.Dependences(set)})
	if err := a.follow(ctx, resources, stripFor(set)); err != nil {
		return err
	}
	if err := a.settle(ctx); err != nil {
		return err
	}
	a.enqueueAll()
	if err := a.drain(ctx); err != nil {
		return err
	}
	a.ready.Store(true)
	// The informers' lists and the pass's garbage peak well above what is
	// held after it; the runtime would give that memory back to the OS
	// over minutes, so the leader's resident memory would stay at the peak
	// meanwhile. One collection now, a small cost beside the pass.
	debug.FreeOSMemory()
	took := time.Since(start)
	a.cfg.Metrics.BackgroundAuditScan(took)
	a.cfg.Log.Info("background audit: every object evaluated", slog.Int("resources", len(resources)), slog.Int("objects", len(a.results.keys())), slog.Duration("took", took))
	return nil
}

// follow starts an informer per resource not watched yet and stops those
// no policy matches any more, dropping their results. Informers holding
// objects cut otherwise than cut are started again.
func (a *auditor) follow(ctx context.Context, resources []audit.Resource, cut strip) error {
	want := map[schema.GroupVersionResource]audit.Resource{}
	for _, r := range resources {
		want[r.GVR] = r
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recut(cut)
	if a.namespaces == nil {
		w, err := a.watch(ctx, namespacesResource, false)
		if err != nil {
			return err
		}
		a.namespaces = w
		a.watching[namespacesResource.GVR] = w
	}
	for gvr, w := range a.watching {
		if _, ok := want[gvr]; ok || w == a.namespaces {
			continue
		}
		w.stop()
		delete(a.watching, gvr)
		a.cfg.Metrics.BackgroundAuditUnreadable(gvr.GroupResource().String(), false)
		a.cfg.Log.Info("background audit: no policy matches this resource any more", slog.String("resource", gvr.GroupResource().String()))
	}
	a.namespaces.audited.Store(false)
	for gvr, r := range want {
		if w, ok := a.watching[gvr]; ok {
			w.audited.Store(true)
			continue
		}
		w, err := a.watch(ctx, r, true)
		if err != nil {
			return err
		}
		a.watching[gvr] = w
	}
	return nil
}

// enqueueAll queues every object held and every object with results (one
// deleted unseen is dropped then).
func (a *auditor) enqueueAll() {
	a.mu.Lock()
	for _, w := range a.watching {
		if w.audited.Load() {
			for _, k := range w.keys() {
				a.objects.Add(k)
			}
		}
	}
	a.mu.Unlock()
	for _, k := range a.results.keys() {
		a.objects.Add(k)
	}
}

func (a *auditor) stopAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range a.watching {
		w.stop()
	}
}

func keysOf(m map[string]bool) []string { return slices.Collect(maps.Keys(m)) }

// errNoReports is returned by Run without a Reports.
var errNoReports = errors.New("background audit needs a report writer")
