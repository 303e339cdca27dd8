package backgroundaudit

// The cluster's own ValidatingAdmissionPolicies (Config.ClusterPolicies):
// informers of the VAPs and their bindings; any change to either rebuilds
// the policy set (tollgate's config, then the cluster's VAPs: policy.Set.
// WithCluster) and evaluates everything again, as a reload of tollgate's
// config does. The params of every VAP audited are read through the
// engine's params store, as the audit's user of it; a param that changes
// has the objects its policies may match evaluated again.

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/tollgate-dev/tollgate/internal/audit"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// paramsUser is the audit among the params store's users.
const paramsUser = "background-audit"

// clusterPolicies watches the cluster's VAPs and bindings.
type clusterPolicies struct {
	vaps, bindings *watched
	// changed is signalled by any change of either.
	changed chan struct{}

	mu sync.Mutex
	// failing are the resources whose list or watch fails, logged once.
	failing map[string]bool
	// logged is what the last merge said, logged again only when it changes.
	logged string
}

// watchClusterPolicies starts the informers of VAPs and bindings.
func (a *auditor) watchClusterPolicies(ctx context.Context) (*clusterPolicies, error) {
	c := &clusterPolicies{changed: make(chan struct{}, 1), failing: map[string]bool{}}
	handle := func(*watched) cache.ResourceEventHandler {
		return cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { signal(c.changed) },
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*unstructured.Unstructured)
				n, _ := cur.(*unstructured.Unstructured)
				if policyChanged(o, n) { // not the apiserver's typeChecking status
					signal(c.changed)
				}
			},
			DeleteFunc: func(any) { signal(c.changed) },
		}
	}
	onError := func(w *watched, err error) {
		gr := w.resource.GVR.GroupResource().String()
		if !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) && !apierrors.IsNotFound(err) {
			// The apiserver unreachable, a watch expired: the informer
			// lists again by itself and keeps what it holds meanwhile.
			a.cfg.Log.Warn("background audit: watch of the cluster's ValidatingAdmissionPolicies interrupted; retrying", slog.String("resource", gr), slog.Any("error", err))
			return
		}
		a.cfg.Metrics.BackgroundAuditUnreadable(gr, true)
		c.mu.Lock()
		first := !c.failing[gr]
		c.failing[gr] = true
		c.mu.Unlock()
		if !first {
			return
		}
		a.cfg.Log.Error("background audit: cannot list or watch the cluster's ValidatingAdmissionPolicies; they are not audited until the apiserver serves admissionregistration.k8s.io/v1 (Kubernetes 1.30 on) and tollgate's ClusterRole grants get, list and watch on validatingadmissionpolicies and validatingadmissionpolicybindings (or --audit-cluster-policies=false)",
			slog.String("resource", gr), slog.Any("error", err))
		// Once granted, the informer lists: audit them then, VAPs or none.
		go func() {
			if cache.WaitForCacheSync(ctx.Done(), w.informer.HasSynced) {
				signal(c.changed)
			}
		}()
	}
	var err error
	if c.vaps, err = watch(ctx, a.cfg.Client, audit.VAPResource, false, policyObjects.transform, handle, onError); err != nil {
		return nil, fmt.Errorf("background audit: watch %s: %w", audit.VAPResource.GVR.GroupResource(), err)
	}
	if c.bindings, err = watch(ctx, a.cfg.Client, audit.VAPBindingResource, false, policyObjects.transform, handle, onError); err != nil {
		c.vaps.stop()
		return nil, fmt.Errorf("background audit: watch %s: %w", audit.VAPBindingResource.GVR.GroupResource(), err)
	}
	return c, nil
}

// signal tells c's reader of a change; a pending one is enough.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (c *clusterPolicies) stop() {
	c.vaps.stop()
	c.bindings.stop()
}

// settled: both informers have read their objects, or failed to.
func (c *clusterPolicies) settled() bool {
	v, _ := c.vaps.settled()
	b, _ := c.bindings.settled()
	return v && b
}

// merge is the set of tollgate's config and the cluster's VAPs, as the
// informers hold them now; a VAP that cannot be read, or that tollgate's
// config shadows, is logged. Until both informers have synced (RBAC
// refuses them), the config alone.
func (c *clusterPolicies) merge(a *auditor, config *policy.Set) *policy.Set {
	if !c.vaps.informer.HasSynced() || !c.bindings.informer.HasSynced() {
		return config
	}
	c.mu.Lock()
	for _, w := range []*watched{c.vaps, c.bindings} {
		gr := w.resource.GVR.GroupResource().String()
		if c.failing[gr] {
			delete(c.failing, gr)
			a.cfg.Metrics.BackgroundAuditUnreadable(gr, false)
			a.cfg.Log.Info("background audit: the cluster's ValidatingAdmissionPolicies are read again", slog.String("resource", gr))
		}
	}
	c.mu.Unlock()
	cluster, errs := policy.ClusterVAPs(objects(c.vaps), objects(c.bindings))
	merged, shadowed := config.WithCluster(cluster)
	var msgs []string
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	said := strings.Join(msgs, "\n") + "|" + strings.Join(shadowed, ",")
	c.mu.Lock()
	changed := said != c.logged
	c.logged = said
	c.mu.Unlock()
	if changed {
		for _, m := range msgs {
			a.cfg.Log.Error("background audit: a ValidatingAdmissionPolicy of the cluster cannot be read; it is not audited", slog.String("error", m))
		}
		if len(shadowed) > 0 {
			a.cfg.Log.Warn("background audit: ValidatingAdmissionPolicies of the cluster named as policies of tollgate's config are not audited from the cluster: the config's policy of that name is", slog.Any("policies", shadowed))
		}
	}
	return merged
}

func objects(w *watched) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range w.informer.GetStore().List() {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// paramsWait bounds the wait for the params of a reloaded set.
const paramsWait = 30 * time.Second

// followParams has the params store watch the param kinds of every policy
// audited, not only those the server uses, and waits for them. A kind
// that cannot be read is each policy's configuration error, as at the
// apiserver.
func (a *auditor) followParams(ctx context.Context, set *policy.Set) {
	store := a.cfg.Engine.External.Params
	if store == nil {
		return
	}
	store.UseFor(paramsUser, set.ParamKinds())
	wait, cancel := context.WithTimeout(ctx, paramsWait)
	defer cancel()
	if err := store.WaitSyncedFor(wait, paramsUser); err != nil && ctx.Err() == nil {
		a.cfg.Log.Error("background audit: params not read yet; the policies reading them get the apiserver's configuration error", slog.Any("error", err))
	}
}

// policyChanged tells whether an update of a VAP or binding changed more
// than its resourceVersion and status (the apiserver's typeChecking); the
// informers drop managedFields.
func policyChanged(old, cur *unstructured.Unstructured) bool {
	if old == nil || cur == nil {
		return true
	}
	return !equality.Semantic.DeepEqual(judged(old), judged(cur))
}

func judged(u *unstructured.Unstructured) map[string]any {
	out := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		if k != "status" && k != "metadata" {
			out[k] = v
		}
	}
	if meta, ok := u.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(meta))
		for k, v := range meta {
			if k != "resourceVersion" && k != "managedFields" {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}
