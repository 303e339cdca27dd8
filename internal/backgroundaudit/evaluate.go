package backgroundaudit

// The workers: each queued object is decided again with the engine and its
// results kept, its namespace marked for writing when they changed.

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/audit"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
)

// work evaluates queued objects until the queue shuts down.
func (a *auditor) work(ctx context.Context) {
	for {
		key, shutdown := a.objects.Get()
		if shutdown {
			return
		}
		a.inflight.Add(1)
		if err := a.evaluate(ctx, key); err != nil {
			a.cfg.Log.Error("background audit", slog.String("object", key), slog.Any("error", err))
		}
		a.objects.Done(key)
		a.inflight.Add(-1)
	}
}

// evaluate decides one object again and marks its namespace when its
// results changed.
func (a *auditor) evaluate(ctx context.Context, key string) error {
	gvr, storeKey, err := splitKey(key)
	if err != nil {
		return err
	}
	a.mu.Lock()
	w := a.watching[gvr]
	a.mu.Unlock()
	var obj any
	exists := false
	if w != nil && w.audited.Load() {
		if obj, exists, err = w.informer.GetStore().GetByKey(storeKey); err != nil {
			return err
		}
	}
	h, ok := obj.(*held)
	if !exists || !ok {
		if ns, ok := a.results.remove(key); ok {
			a.flush.mark(ns)
		}
		return nil
	}
	st := a.state.Load()
	f, keep := reported(audit.EvaluateJSON(ctx, st.eng, w.resource, h.JSON, h.Namespace, h.Name, h.UID, st.depends))
	if !keep {
		if ns, ok := a.results.remove(key); ok {
			a.flush.mark(ns)
		}
		return nil
	}
	if a.results.set(key, entry{namespace: h.Namespace, uid: h.UID, finding: f}) {
		a.flush.mark(h.Namespace)
	}
	return nil
}

// namespace serves engine.Options.Namespaces from the audit's informer.
func (a *auditor) namespace(name string) (*corev1.Namespace, bool) {
	a.mu.Lock()
	w := a.namespaces
	a.mu.Unlock()
	if w == nil {
		return nil, false
	}
	obj, ok, err := w.informer.GetStore().GetByKey(name)
	if err != nil || !ok {
		return nil, false
	}
	h, ok := obj.(*held)
	if !ok {
		return nil, false
	}
	return namespaces.Of(name, h.Labels), true
}
