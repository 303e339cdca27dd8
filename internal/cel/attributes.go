package cel

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/cel/lazy"
)

// Attributes is a review as the apiserver's admission plugins see it, with
// object and oldObject decoded (nil when absent), for Kubernetes admission
// policies' matchers and evaluators.
func Attributes(req *admission.Request) (k8sadmission.Attributes, error) {
	obj, err := RuntimeObject(req.Object())
	if err != nil {
		return nil, err
	}
	old, err := RuntimeObject(req.OldObject())
	if err != nil {
		return nil, err
	}
	return AttributesWith(req, obj, old), nil
}

// AttributesWith is the review with obj and old as its objects.
func AttributesWith(req *admission.Request, obj, old runtime.Object) k8sadmission.Attributes {
	return k8sadmission.NewAttributesRecord(obj, old, req.Kind, req.Namespace, req.Name, req.Resource, req.SubResource,
		k8sadmission.Operation(req.Operation), nil, req.DryRun,
		&user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups})
}

// ObjectFromJSON decodes an object for CEL as the apiserver does for
// unstructured objects (lazy.ObjectFromJSON).
func ObjectFromJSON(raw []byte) (*unstructured.Unstructured, error) { return lazy.ObjectFromJSON(raw) }

// RuntimeObject is ObjectFromJSON for an optional object: no bytes give a
// nil interface, which the CEL variables read as null (oldObject on
// CREATE, object on DELETE).
func RuntimeObject(raw []byte) (runtime.Object, error) { return lazy.RuntimeObject(raw) }

// NewInput is the CEL input of req without its objects, with ns as
// namespaceObject (nil: null).
func NewInput(req *admission.Request, ns *corev1.Namespace) *Input {
	return &Input{
		Kind: req.Kind, Resource: req.Resource, SubResource: req.SubResource,
		Name: req.Name, Namespace: req.Namespace, Operation: string(req.Operation), DryRun: req.DryRun,
		User:            &user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups},
		NamespaceObject: ns,
	}
}
