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
}
