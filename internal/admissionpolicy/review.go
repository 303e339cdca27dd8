package admissionpolicy

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/cel"
)

// Review is one request as the apiserver's policy plugins read it, shared
// by every policy of one webhook call. Matching reads only the objects'
// metadata. The objects are decoded whole once, for the first policy that
// matches, and never for a call no policy matches.
type Review struct {
	Request *admission.Request
	// TrackedOnly: the fast path is never asked (--cel-fast-path=false).
	TrackedOnly bool

	match, whole k8sadmission.Attributes
	err          error // why the objects cannot be decoded
	// in is the request as CEL's fast path reads it (the review's JSON,
	// never decoded whole), with ns as namespaceObject.
	in *cel.Input
	ns *corev1.Namespace
}

// NewReview is req, not yet decoded.
func NewReview(req *admission.Request) *Review { return &Review{Request: req} }

// MatchAttributes is the request with objects that hold only what the
// apiserver's matcher reads: kind, name, namespace and labels. Objects
// whose metadata cannot be read so are decoded whole instead.
func (r *Review) MatchAttributes() (k8sadmission.Attributes, error) {
	if r.match != nil {
		return r.match, nil
	}
	obj, old, err := r.Request.Meta()
	if err != nil {
		return r.Attributes()
	}
	r.match = cel.AttributesWith(r.Request, r.metaObject(obj), r.metaObject(old))
	return r.match, nil
}

// Attributes is the request with its objects decoded whole (nil when
// absent), as the apiserver's validator reads them.
func (r *Review) Attributes() (k8sadmission.Attributes, error) {
	if r.whole != nil || r.err != nil {
		return r.whole, r.err
	}
	r.whole, r.err = cel.Attributes(r.Request)
	if r.err != nil {
		r.whole = nil
	}
	return r.whole, r.err
}

// Input is the request as the fast path reads it, with ns as
// namespaceObject; nil when its objects cannot be read so. Built once per
// namespace object, and so shared by the policies of one webhook call.
func (r *Review) Input(ns *corev1.Namespace) *cel.Input {
	if r.in == nil || r.ns != ns {
		in := cel.NewInput(r.Request, ns)
		in.ObjectJSON, in.OldObjectJSON, in.Indexed = r.Request.Object(), r.Request.OldObject(), r.Request.Indexed()
		in.TrackedOnly = r.TrackedOnly
		r.in, r.ns = in, ns
	}
	if r.in.Check() != nil {
		return nil
	}
	return r.in
}

// metaObject is an object of the request's kind with m's metadata; nil
// when there is no object.
func (r *Review) metaObject(m *admission.ObjectMeta) runtime.Object {
	if m == nil {
		return nil
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(r.Request.Kind)
	u.SetName(m.Name)
	u.SetGenerateName(m.GenerateName)
	u.SetNamespace(m.Namespace)
	u.SetLabels(m.Labels)
	return u
}
