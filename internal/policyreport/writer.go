package policyreport

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/report"
)

// The label that marks tollgate's reports; Sync and Existing touch no other.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "tollgate"
)

// The operations OnWrite reports.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
)

// listPage bounds each list call.
const listPage = 500

// Options tune a Writer.
type Options struct {
	Log *slog.Logger
	// MaxResultsPerReport splits a namespace's results into several
	// reports; DefaultMaxResults unless set.
	MaxResultsPerReport int
	// OnWrite, when set, is called after each write (OpCreate, OpUpdate,
	// OpDelete), for metrics.
	OnWrite func(op string)
}

// Writer keeps one namespace's (or, for namespace "", the cluster-scoped
// objects') reports equal to the findings.
type Writer struct {
	client dynamic.Interface
	api    API
	opts   Options
	now    func() time.Time
}

// NewWriter writes reports of api through client.
func NewWriter(client dynamic.Interface, api API, opts Options) *Writer {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.MaxResultsPerReport <= 0 {
		opts.MaxResultsPerReport = DefaultMaxResults
	}
	return &Writer{client: client, api: api, opts: opts, now: time.Now}
}

// API is the report API the writer writes.
func (w *Writer) API() API { return w.api }

// Sync makes the namespace's reports hold exactly the findings' results,
// which must all be of objects in that namespace ("" for cluster-scoped
// objects). It reads the reports there, keeps the timestamp of each
// unchanged result, and creates, updates or deletes only the reports whose
// content differs; with no results it deletes them all. writes counts the
// writes it made.
func (w *Writer) Sync(ctx context.Context, namespace string, findings []offline.Finding) (writes int, err error) {
	for _, f := range findings {
		if f.Object.Namespace != namespace {
			return 0, fmt.Errorf("report of namespace %q cannot hold %s", namespace, f.Object)
		}
	}
	k := kindFor(w.api, namespace)
	current, err := w.list(ctx, k, namespace)
	if err != nil {
		return 0, err
	}
	previous := map[string]report.Result{}
	existing := map[string]*unstructured.Unstructured{}
	for i := range current {
		u := &current[i]
		if u.GetNamespace() != namespace {
			continue
		}
		existing[u.GetName()] = u
		b, err := decode(u)
		if err != nil {
			return 0, err
		}
		for _, r := range b.Results {
			if len(r.Resources) == 1 {
				previous[resultKey(&r)] = r
			}
		}
	}
	want, err := w.build(namespace, findings, previous)
	if err != nil {
		return 0, err
	}
	res := w.client.Resource(k.GVR).Namespace(namespace)
	for _, u := range want {
		name := u.GetName()
		old, ok := existing[name]
		delete(existing, name)
		rs, _, _ := unstructured.NestedSlice(u.Object, "results")
		n := len(rs)
		switch {
		case !ok:
			if _, err := res.Create(ctx, u, metav1.CreateOptions{FieldManager: ManagedBy}); err != nil {
				return writes, fmt.Errorf("create %s %s: %w", k.Kind, where(namespace, name), err)
			}
			writes += w.wrote(OpCreate, k, namespace, name, n)
		case !same(old, u):
			u.SetResourceVersion(old.GetResourceVersion())
			if _, err := res.Update(ctx, u, metav1.UpdateOptions{FieldManager: ManagedBy}); err != nil {
				return writes, fmt.Errorf("update %s %s: %w", k.Kind, where(namespace, name), err)
			}
			writes += w.wrote(OpUpdate, k, namespace, name, n)
		}
	}
	for name, old := range existing {
		pre := metav1.Preconditions{UID: ptr.To(old.GetUID())}
		if err := res.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &pre}); err != nil {
			return writes, fmt.Errorf("delete %s %s: %w", k.Kind, where(namespace, name), err)
		}
		writes += w.wrote(OpDelete, k, namespace, name, 0)
	}
	return writes, nil
}

// Existing lists the namespaces that have tollgate reports ("" for the
// cluster-scoped ones) with how many results they hold, so that a new
// leader resumes from the reports that exist and deletes those of
// namespaces that no longer have findings.
func (w *Writer) Existing(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	ns, cl := kinds(w.api)
	for _, k := range []kind{ns, cl} {
		items, err := w.list(ctx, k, metav1.NamespaceAll)
		if err != nil {
			return nil, err
		}
		for i := range items {
			rs, _, err := unstructured.NestedSlice(items[i].Object, "results")
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", k.Kind, where(items[i].GetNamespace(), items[i].GetName()), err)
			}
			out[items[i].GetNamespace()] += len(rs)
		}
	}
	return out, nil
}

// list reads tollgate's reports of a kind in a namespace (all when
// namespace is NamespaceAll; the cluster-scoped kind ignores it).
func (w *Writer) list(ctx context.Context, k kind, namespace string) ([]unstructured.Unstructured, error) {
	opts := metav1.ListOptions{LabelSelector: ManagedByLabel + "=" + ManagedBy, Limit: listPage}
	var ri dynamic.ResourceInterface = w.client.Resource(k.GVR)
	if k.Namespaced {
		ri = w.client.Resource(k.GVR).Namespace(namespace)
	}
	var out []unstructured.Unstructured
	for {
		page, err := ri.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list %s (are the %s CRDs installed?): %w", k.GVR.GroupResource(), w.api, err)
		}
		out = append(out, page.Items...)
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// build makes the namespace's reports of the findings; previous holds the
// results the namespace's reports hold now, whose timestamps unchanged
// results keep.
func (w *Writer) build(namespace string, findings []offline.Finding, previous map[string]report.Result) ([]*unstructured.Unstructured, error) {
	k := kindFor(w.api, namespace)
	rs := results(findings)
	stamp(rs, previous, w.now())
	parts, err := split(rs, w.opts.MaxResultsPerReport, w.api)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(parts))
	for i := range parts {
		name := partName(i)
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&parts[i])
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", k.Kind, where(namespace, name), err)
		}
		u := &unstructured.Unstructured{Object: content}
		u.SetAPIVersion(k.GVR.GroupVersion().String())
		u.SetKind(k.Kind)
		u.SetName(name)
		u.SetNamespace(namespace)
		u.SetLabels(map[string]string{ManagedByLabel: ManagedBy})
		out[i] = u
	}
	return out, nil
}

// same tells whether a stored report already holds what want does
// (timestamps included: unchanged results keep theirs) and carries the
// label.
func same(old, want *unstructured.Unstructured) bool {
	if old.GetLabels()[ManagedByLabel] != ManagedBy {
		return false
	}
	a, err1 := decode(old)
	b, err2 := decode(want)
	if err1 != nil || err2 != nil || a.Source != b.Source || a.Summary != b.Summary || len(a.Results) != len(b.Results) {
		return false
	}
	for i := range a.Results {
		ta, tb := a.Results[i].Timestamp, b.Results[i].Timestamp
		if ta == nil || tb == nil || *ta != *tb || !sameResult(a.Results[i], b.Results[i]) {
			return false
		}
	}
	return true
}

func decode(u *unstructured.Unstructured) (body, error) {
	var b body
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b); err != nil {
		return b, fmt.Errorf("read %s %s: %w", u.GetKind(), where(u.GetNamespace(), u.GetName()), err)
	}
	return b, nil
}

func (w *Writer) wrote(op string, k kind, namespace, name string, n int) int {
	w.opts.Log.Debug("report written", "op", op, "kind", k.Kind, "namespace", namespace, "name", name, "results", n)
	if w.opts.OnWrite != nil {
		w.opts.OnWrite(op)
	}
	return 1
}

func where(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
