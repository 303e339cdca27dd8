package cel

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tollgate-dev/tollgate/internal/cel/lazy"
	"github.com/tollgate-dev/tollgate/internal/jsonscan"
	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// Input is one request as the CEL variables see it.
type Input struct {
	// Object and OldObject are the objects, nil for none; an input made
	// with ObjectJSON (OldObjectJSON) may leave it nil: Objects decodes it
	// when something needs it decoded.
	Object, OldObject runtime.Object
	Kind              schema.GroupVersionKind
	Resource          schema.GroupVersionResource
	SubResource       string
	Name, Namespace   string
	Operation         string
	DryRun            bool
	User              user.Info
	NamespaceObject   *corev1.Namespace
	// References is where the policies' declared references are read
	// (references.<name>); nil for none: a lookup then fails, naming the
	// kind, and failurePolicy decides.
	References *refs.Store
	// ObjectJSON and OldObjectJSON are Object and OldObject as the review
	// carries them (validated JSON), when it does: the evaluation of
	// tollgate's CEL policies reads the values the expressions reach from
	// them instead of decoding the whole objects. Check them first. As
	// clears them: its objects are made, not carried.
	ObjectJSON, OldObjectJSON []byte
	// Indexed, when it has sizes, is the validated JSON ObjectJSON and
	// OldObjectJSON are values of, indexed, with their sizes, as
	// admission.Decode reads a review (Request.Indexed): Check then reads
	// them from it instead of indexing them again.
	Indexed jsonscan.Indexed

	// attrs and review are built on first use and shared by every policy
	// evaluated on this input, so the objects' CEL values are converted once
	// per request.
	attrs  *k8sadmission.VersionedAttributes
	review *review
	// fast is what the fast path reads of the input (fast.go), built on
	// first use; it checks it was built for this input's objects.
	fast *fastInput
	// TrackedOnly: every program decides on the tracked path, the fast
	// path never asked (the operator's --cel-fast-path=false): the same
	// decisions, slower.
	TrackedOnly bool
	// obj and old are the objects as Objects returns them, decoded from
	// the bytes where Object or OldObject is nil; decodeErr why they could
	// not be, once tried.
	decoded   bool
	obj, old  runtime.Object
	decodeErr error
	// docs are ObjectJSON and OldObjectJSON as read by Check, and docsErr
	// why they cannot be read.
	checked bool
	docs    [2]*lazy.Document
	docsErr error
	// deep: an object nests deeper than documents are read (lazy.Deep),
	// so Check decoded the objects instead, which the evaluation reads.
	deep bool
}

// As returns a copy of the input about other objects of another kind, such
// as the Pod a Deployment's template makes.
func (in *Input) As(obj, old runtime.Object, kind schema.GroupVersionKind, resource schema.GroupVersionResource) *Input {
	out := *in
	out.Object, out.OldObject, out.Kind, out.Resource = obj, old, kind, resource
	out.ObjectJSON, out.OldObjectJSON, out.Indexed = nil, nil, jsonscan.Indexed{}
	out.attrs, out.review = nil, nil
	out.decoded, out.obj, out.old, out.decodeErr = false, nil, nil, nil
	out.checked, out.docs, out.docsErr, out.deep = false, [2]*lazy.Document{}, nil, false
	return &out
}

// AsJSON is As for objects given as JSON (validated, as a review's; nil
// for none), which the evaluation reads as it reads a review's: Check
// the copy first.
func (in *Input) AsJSON(obj, old []byte, kind schema.GroupVersionKind, resource schema.GroupVersionResource) *Input {
	out := in.As(nil, nil, kind, resource)
	out.ObjectJSON, out.OldObjectJSON = obj, old
	return out
}

// Check reads ObjectJSON and OldObjectJSON once, for where their objects
// and arrays end (which the evaluation then reads them by), and returns the
// error decoding them would return (ObjectFromJSON's: not an object, or
// nested deeper than the apiserver decodes), the object's first.
// Evaluating an input whose bytes Check refuses fails with that error.
// Objects nested deeper than their values are read lazily (lazy.Deep) are
// decoded instead (Objects), as the apiserver decodes them, and every
// program then decides on the tracked path, on the decoded objects.
func (in *Input) Check() error {
	if !in.checked {
		in.checked = true
		in.docs[0], in.docsErr = lazy.NewDocument(in.ObjectJSON, in.Indexed)
		if in.docsErr == nil {
			in.docs[1], in.docsErr = lazy.NewDocument(in.OldObjectJSON, in.Indexed)
		}
		if errors.Is(in.docsErr, lazy.ErrDeep) {
			in.deep, in.docs = true, [2]*lazy.Document{}
			_, _, in.docsErr = in.Objects()
		}
	}
	return in.docsErr
}

// Documents are the indexed JSON Check read ObjectJSON and OldObjectJSON
// in (each a value of its document, which may hold more), the zero
// Indexed for those it did not (no bytes, refused, or not checked yet).
func (in *Input) Documents() (obj, old jsonscan.Indexed) {
	var x [2]jsonscan.Indexed
	for i, d := range in.docs {
		if d != nil {
			x[i] = d.Indexed()
		}
	}
	return x[0], x[1]
}

// Objects returns Object and OldObject, decoding on first use those the
// input carries only as JSON (ObjectFromJSON), without setting the fields;
// the apiserver's evaluators and Pod templates read objects, not bytes.
func (in *Input) Objects() (obj, old runtime.Object, err error) {
	if !in.decoded {
		in.decoded = true
		in.obj, in.old = in.Object, in.OldObject
		if in.obj == nil {
			in.obj, in.decodeErr = RuntimeObject(in.ObjectJSON)
		}
		if in.old == nil && in.decodeErr == nil {
			in.old, in.decodeErr = RuntimeObject(in.OldObjectJSON)
		}
	}
	return in.obj, in.old, in.decodeErr
}

// versioned is the input as the apiserver's evaluators read it, the
// objects decoded (Objects; an object Check refuses reads as none).
func (in *Input) versioned() *k8sadmission.VersionedAttributes {
	if in.attrs == nil {
		obj, old, _ := in.Objects()
		in.attrs = &k8sadmission.VersionedAttributes{Attributes: in.attributes(obj, old), VersionedKind: in.Kind,
			VersionedObject: k8sadmission.NewLazyObject(obj), VersionedOldObject: k8sadmission.NewLazyObject(old)}
	}
	return in.attrs
}

// attributes is the request with obj and old as its objects.
func (in *Input) attributes(obj, old runtime.Object) k8sadmission.Attributes {
	return k8sadmission.NewAttributesRecord(obj, old, in.Kind, in.Namespace, in.Name, in.Resource, in.SubResource,
		k8sadmission.Operation(in.Operation), nil, in.DryRun, in.User)
}
