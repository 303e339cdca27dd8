package admissionpolicy

import (
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

	match, whole k8sadmission.Attributes
	err          error // why the objects cannot be decoded
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
