package manifest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/scheme"
)

// clusterScoped are the built-in kinds that live outside namespaces.
var clusterScoped = sets.New(
	"Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding",
	"StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "PriorityClass", "RuntimeClass",
	"IngressClass", "CertificateSigningRequest", "MutatingWebhookConfiguration",
	"ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
	"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "FlowSchema",
	"PriorityLevelConfiguration", "ComponentStatus", "CustomResourceDefinition", "APIService",
	"DeviceClass", "ResourceSlice", "IPAddress", "ServiceCIDR", "VolumeAttributesClass",
	"StorageVersionMigration", "ClusterTrustBundle", "SelfSubjectReview", "TokenReview",
	"SubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview",
	"DeviceTaintRule", "ResourcePoolStatusRequest", "StorageVersion",
)

// Resource maps a kind to its resource, as the apiserver names it in
// admission requests. Only Kubernetes' built-in kinds are known; any other is
// an error, so that nothing passes unchecked by mistake.
func Resource(gvk schema.GroupVersionKind) (gvr schema.GroupVersionResource, namespaced bool, err error) {
	if !scheme.Scheme.Recognizes(gvk) {
		return gvr, false, fmt.Errorf("unknown kind %s: tollgate knows the built-in Kubernetes kinds only", gvk.GroupVersion().WithKind(gvk.Kind).String())
	}
	gvr, _ = meta.UnsafeGuessKindToResource(gvk)
	return gvr, !clusterScoped.Has(gvk.Kind), nil
}
