package admission

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
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
// Object and OldObject are the raw JSON the apiserver sent: policies decode
// only what they read, and patches are built against these exact bytes.
// Decode slices them from the body, which must stay unchanged meanwhile.
type Request struct {
	UID         string
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	SubResource string
	Name        string
	Namespace   string
	Operation   Operation
	UserInfo    UserInfo
	Object      []byte
	OldObject   []byte
	DryRun      bool
	// ObjectMeta and OldObjectMeta are read by Decode in the same pass as
	// the review; nil when the request was built otherwise (offline checks).
	// Whoever changes Object must set ObjectMeta to nil.
	ObjectMeta, OldObjectMeta *ObjectMeta
	// ShapeError says why an object's metadata or spec could not be read.
	ShapeError error
}

// ObjectMeta is the part of an object every policy may read.
type ObjectMeta struct {
	Name, GenerateName, Namespace string
	Labels                        map[string]string
}
