package backgroundaudit

// What the informers' caches leave out of the objects they hold. The
// apiserver gives a webhook managedFields, the
// kubectl.kubernetes.io/last-applied-configuration annotation and status
// (the audit decides the stored object, status included), and any CEL
// expression may read them, so each is dropped only while no loaded
// validating policy may read it (analysis.MayRead over every expression of
// every validating policy, tollgate's and the cluster's VAPs alike). They
// are often most of a stored object's bytes. A reload that changes the
// rule starts every informer again, so that no cache holds objects cut
// for another policy set.

import (
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

var (
	managedFieldsPath = []string{"metadata", "managedFields"}
	lastAppliedPath   = []string{"metadata", "annotations", corev1.LastAppliedConfigAnnotation}
	statusPath        = []string{"status"}
)

// strip says what the informers drop from each object they hold.
type strip struct {
	managedFields, lastApplied, status bool
}

// stripFor is what no validating policy of the set may read.
func stripFor(set *policy.Set) strip {
	var exprs []string
	for _, g := range set.Groups {
		if g.Action != policy.ActionValidate {
			continue
		}
		for _, p := range g.Policies {
			exprs = append(exprs, p.Expressions()...)
		}
	}
	return strip{managedFields: !analysis.MayRead(managedFieldsPath, exprs...), lastApplied: !analysis.MayRead(lastAppliedPath, exprs...),
		status: !analysis.MayRead(statusPath, exprs...)}
}

// transform is the cluster policies' informers' transform: it cuts the
// object in place (client-go hands it over before storing it).
func (s strip) transform(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		s.cut(u)
	}
	return obj, nil
}

// cut drops what s says from u, in place. The annotations map stays, empty
// or not, so that has() of it answers as before.
func (s strip) cut(u *unstructured.Unstructured) *unstructured.Unstructured {
	if s.managedFields {
		unstructured.RemoveNestedField(u.Object, managedFieldsPath...)
	}
	if s.status {
		delete(u.Object, "status")
	}
	if s.lastApplied {
		if ann, ok := u.Object["metadata"].(map[string]any)["annotations"].(map[string]any); ok {
			delete(ann, corev1.LastAppliedConfigAnnotation)
		}
	}
	return u
}

func (s strip) attrs() slog.Attr {
	return slog.Group("informer caches drop", slog.Bool("managedFields", s.managedFields), slog.Bool("lastAppliedConfiguration", s.lastApplied), slog.Bool("status", s.status))
}

// policyObjects: the cluster's VAPs and bindings are read as policies,
// never judged; their managedFields go.
var policyObjects = strip{managedFields: true}

// recut stops every informer when they hold objects cut otherwise than
// cut (or none runs yet), so that follow starts them with cut. a.mu held.
func (a *auditor) recut(cut strip) {
	if cut != a.cut || len(a.watching) == 0 {
		// again: the policies read other fields than before.
		a.cfg.Log.Info("background audit: informers start", cut.attrs(), slog.Bool("again", len(a.watching) > 0))
		for gvr, w := range a.watching {
			w.stop()
			delete(a.watching, gvr)
		}
		a.namespaces = nil
		a.cut = cut
	}
}
