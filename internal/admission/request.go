package admission

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// Operation is the verb of an admission request.
type Operation string

// The operations the apiserver sends to admission webhooks.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// UserInfo is who made the request, as the apiserver authenticated them.
type UserInfo struct {
	Username string
	UID      string
	Groups   []string
}

// Request is one admission request, independent of the review version it came in.
// Its objects are the raw JSON the apiserver sent: policies decode only what
// they read, and patches are built against these exact bytes. Decode slices
// them from the body, which must stay unchanged meanwhile; a request built
// otherwise gets them from SetObjects, so that Meta never answers for bytes
// it did not read. A Request is for one goroutine at a time.
type Request struct {
	UID         string
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	SubResource string
	Name        string
	Namespace   string
	Operation   Operation
	UserInfo    UserInfo
	DryRun      bool

	object, oldObject []byte
	// meta is what Meta read of object and oldObject: by Decode in the same
	// pass as the review, else on the first call; nil until then. Only
	// SetObjects changes the objects, and it clears meta.
	meta *metas
	// doc is the body Decode read the objects from, indexed and with their
	// sizes; the zero Indexed for objects set otherwise.
	doc jsonscan.Indexed
}

// objectSizing is what Decode sizes of a review: its objects, their
// metadata's strings apart, as CEL's fast path bounds them.
var objectSizing = &jsonscan.Sizing{Paths: [][]string{{"request", "object"}, {"request", "oldObject"}}, Apart: "metadata"}

// Indexed is the review's body the objects are slices of, validated,
// indexed and with the objects' sizes (objectSizing), as Decode read it;
// the zero Indexed when the objects were set otherwise.
func (r *Request) Indexed() jsonscan.Indexed { return r.doc }

// ObjectMeta is the part of an object every policy may read.
type ObjectMeta struct {
	Name, GenerateName, Namespace string
	Labels                        map[string]string
}

// Object is the JSON of the object, nil when there is none (DELETE).
func (r *Request) Object() []byte { return r.object }

// OldObject is the JSON of the old object, nil when there is none (CREATE).
func (r *Request) OldObject() []byte { return r.oldObject }

// SetObjects sets the request's object and old object (nil for none); their
// metadata is read again when next asked for.
func (r *Request) SetObjects(object, oldObject []byte) {
	r.object, r.oldObject, r.meta, r.doc = object, oldObject, nil, jsonscan.Indexed{}
}

// SetObject replaces the object, keeping the old object.
func (r *Request) SetObject(object []byte) { r.SetObjects(object, r.oldObject) }

// Meta returns the metadata of the object and of the old object (nil for an
// absent one), or why either's shape is not one Kubernetes could have sent:
// an object whose metadata has the types the API gives it and whose spec,
// if any, is an object.
func (r *Request) Meta() (object, oldObject *ObjectMeta, err error) {
	if r.meta == nil {
		r.meta = readMetas(r.object, r.oldObject)
	}
	return r.meta.object, r.meta.oldObject, r.meta.err
}

// ObjectParts returns where the object's metadata and spec are, found by
// the scan Meta reads them with; empty when Meta returns an error.
func (r *Request) ObjectParts() Parts {
	if _, _, err := r.Meta(); err != nil {
		return Parts{}
	}
	return r.meta.parts
}
