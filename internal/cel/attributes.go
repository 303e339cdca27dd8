package cel

import (
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tollgate-dev/tollgate/internal/admission"
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
	return k8sadmission.NewAttributesRecord(obj, old, req.Kind, req.Namespace, req.Name, req.Resource, req.SubResource,
		k8sadmission.Operation(req.Operation), nil, req.DryRun,
		&user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups}), nil
}
