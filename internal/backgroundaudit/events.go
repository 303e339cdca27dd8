package backgroundaudit

// How the informers' events become queued objects: an added, changed or
// deleted object is queued alone; a Namespace whose labels changed queues
// every object in it.

import (
	"context"
	"fmt"
	"log/slog"
	"maps"

	"k8s.io/client-go/tools/cache"

	"github.com/tollgate-dev/tollgate/internal/audit"
)

func (a *auditor) watch(ctx context.Context, r audit.Resource, audited bool) (*watched, error) {
	handle := func(w *watched) cache.ResourceEventHandler {
		return cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { a.event(w, obj, nil) },
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*held)
				c, _ := cur.(*held)
				if changed(o, c) {
					a.event(w, cur, o)
				}
			},
			DeleteFunc: func(obj any) { a.event(w, obj, nil) },
		}
	}
	w, err := watch(ctx, a.cfg.Client, r, audited, a.cut.hold(r), handle, a.watchFailed)
	if err != nil {
		return nil, fmt.Errorf("background audit: watch %s: %w", r.GVR.GroupResource(), err)
	}
	return w, nil
}

// event queues the object for evaluation; for a Namespace whose labels
// changed, every object in it (namespaceSelectors read them).
func (a *auditor) event(w *watched, obj any, old *held) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	if w.audited.Load() {
		a.objects.Add(objectKey(w.resource.GVR, key))
	}
	if w.resource.GVR != namespacesResource.GVR {
		return
	}
	cur, ok := obj.(*held)
	if !ok || old == nil || maps.Equal(old.Labels, cur.Labels) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, x := range a.watching {
		if x.audited.Load() && x.resource.Namespaced {
			for _, k := range x.keysIn(cur.Name) {
				a.objects.Add(k)
			}
		}
	}
}

// watchFailed reports a resource tollgate cannot list or watch: logged
// with what to grant, and counted, never a silently empty report.
func (a *auditor) watchFailed(w *watched, err error) {
	gr := w.resource.GVR.GroupResource().String()
	a.cfg.Metrics.BackgroundAuditUnreadable(gr, true)
	a.cfg.Log.Error("background audit: cannot list or watch a resource the policies match; its objects are missing from the reports until tollgate's ClusterRole grants get, list and watch on it (chart value backgroundAudit.resources)",
		slog.String("resource", gr), slog.Any("error", err))
}
