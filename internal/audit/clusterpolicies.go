package audit

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// The cluster's own ValidatingAdmissionPolicies and their bindings, which
// an audit of the cluster's policies reads (--cluster-policies, and the
// background audit's --audit-cluster-policies).
var (
	VAPResource = Resource{GVR: admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"),
		Kind: "ValidatingAdmissionPolicy"}
	VAPBindingResource = Resource{GVR: admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings"),
		Kind: "ValidatingAdmissionPolicyBinding"}
)

// ClusterVAPs lists the cluster's ValidatingAdmissionPolicies and bindings
// once and reads them as policies (policy.ClusterVAPs): errs name those
// that cannot be read, err is a list that failed.
func ClusterVAPs(ctx context.Context, client dynamic.Interface) (vaps []*policy.Policy, errs []error, err error) {
	var objs [2][]*unstructured.Unstructured
	for i, r := range []Resource{VAPResource, VAPBindingResource} {
		if err := list(ctx, client, r, func(u *unstructured.Unstructured) { objs[i] = append(objs[i], u.DeepCopy()) }); err != nil {
			return nil, nil, fmt.Errorf("the cluster's ValidatingAdmissionPolicies: %w", err)
		}
	}
	vaps, errs = policy.ClusterVAPs(objs[0], objs[1])
	return vaps, errs, nil
}
