package manifest

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestResource(t *testing.T) {
	for _, tc := range []struct {
		gvk        schema.GroupVersionKind
		resource   string
		namespaced bool
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "pods", true},
		{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, "services", true},
		{schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}, "endpoints", true},
		{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces", false},
		{schema.GroupVersionKind{Version: "v1", Kind: "Node"}, "nodes", false},
		{schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolume"}, "persistentvolumes", false},
		{schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}, "persistentvolumeclaims", true},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "deployments", true},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, "ingresses", true},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}, "networkpolicies", true},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"}, "ingressclasses", false},
		{schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, "poddisruptionbudgets", true},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, "clusterroles", false},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}, "rolebindings", true},
		{schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}, "storageclasses", false},
		{schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}, "priorityclasses", false},
		{schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}, "validatingadmissionpolicies", false},
		{schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, "leases", true},
		{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}, "cronjobs", true},
		{schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}, "horizontalpodautoscalers", true},
	} {
		t.Run(tc.gvk.String(), func(t *testing.T) {
			gvr, namespaced, err := Resource(tc.gvk)
			if err != nil {
				t.Fatal(err)
			}
			if gvr.Group != tc.gvk.Group || gvr.Version != tc.gvk.Version || gvr.Resource != tc.resource {
				t.Errorf("resource = %v, want %s", gvr, tc.resource)
			}
			if namespaced != tc.namespaced {
				t.Errorf("namespaced = %v, want %v", namespaced, tc.namespaced)
			}
		})
	}
}

func TestResourceUnknown(t *testing.T) {
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		want string
	}{
		{schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"},
			"unknown kind cert-manager.io/v1, Kind=Certificate: tollgate knows the built-in Kubernetes kinds only"},
		{schema.GroupVersionKind{Version: "v2", Kind: "Pod"}, "unknown kind /v2, Kind=Pod"},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Pod"}, "unknown kind apps/v1, Kind=Pod"},
		{schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "unknown kind apiextensions.k8s.io/v1"},
	} {
		t.Run(tc.gvk.String(), func(t *testing.T) {
			_, _, err := Resource(tc.gvk)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

// clusterScopedInAPI are the kinds k8s.io/api v0.37.2 marks
// +genclient:nonNamespaced, i.e. every cluster-scoped built-in kind (found
// with grep in the module's types.go files, not copied from tollgate).
var clusterScopedInAPI = []string{
	"CSIDriver", "CSINode", "CertificateSigningRequest", "ClusterRole", "ClusterRoleBinding",
	"ClusterTrustBundle", "ComponentStatus", "DeviceClass", "DeviceTaintRule", "FlowSchema",
	"IPAddress", "ImageReview", "IngressClass", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
	"MutatingWebhookConfiguration", "Namespace", "Node", "PersistentVolume", "PriorityClass",
	"PriorityLevelConfiguration", "ResourcePoolStatusRequest", "ResourceSlice", "RuntimeClass",
	"SelfSubjectAccessReview", "SelfSubjectReview", "SelfSubjectRulesReview", "ServiceCIDR",
	"StorageClass", "StorageVersion", "StorageVersionMigration", "SubjectAccessReview", "TokenReview",
	"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration",
	"VolumeAttachment", "VolumeAttributesClass",
}

// TestResourceScopeOfEveryKnownKind: every cluster-scoped kind client-go's
// scheme knows is reported cluster-scoped, in every version it is served in;
// a namespaced check of a cluster-scoped object would put it in "default".
func TestResourceScopeOfEveryKnownKind(t *testing.T) {
	cluster := map[string]bool{}
	for _, k := range clusterScopedInAPI {
		cluster[k] = true
	}
	seen := map[string]bool{}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == "__internal" || strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") ||
			gvk.Kind == "WatchEvent" || gvk.Kind == "Status" || gvk.Kind == "APIVersions" || gvk.Kind == "APIGroup" ||
			gvk.Kind == "APIGroupList" || gvk.Kind == "APIResourceList" {
			continue
		}
		_, namespaced, err := Resource(gvk)
		if err != nil {
			t.Errorf("%v: %v", gvk, err)
			continue
		}
		if cluster[gvk.Kind] {
			seen[gvk.Kind] = true
			if namespaced {
				t.Errorf("%v is cluster-scoped; Resource says namespaced", gvk)
			}
		}
	}
	// The list above is checked against the scheme too: each kind is known.
	for _, k := range clusterScopedInAPI {
		if !seen[k] {
			t.Logf("%s is not in client-go's scheme", k)
		}
	}
	if len(seen) < 30 {
		t.Errorf("only %d of the cluster-scoped kinds are in the scheme; the test checks too little", len(seen))
	}
}
