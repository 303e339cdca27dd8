package manifest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

func TestBuiltin(t *testing.T) {
	for _, tc := range []struct {
		gvk        schema.GroupVersionKind
		resource   string
		namespaced bool
	}{
		{gvk("", "v1", "Pod"), "pods", true},
		{gvk("", "v1", "Service"), "services", true},
		{gvk("", "v1", "Endpoints"), "endpoints", true},
		{gvk("", "v1", "Binding"), "bindings", true},
		{gvk("", "v1", "Namespace"), "namespaces", false},
		{gvk("", "v1", "Node"), "nodes", false},
		{gvk("", "v1", "ComponentStatus"), "componentstatuses", false},
		{gvk("", "v1", "PersistentVolume"), "persistentvolumes", false},
		{gvk("", "v1", "PersistentVolumeClaim"), "persistentvolumeclaims", true},
		{gvk("apps", "v1", "Deployment"), "deployments", true},
		{gvk("networking.k8s.io", "v1", "Ingress"), "ingresses", true},
		{gvk("networking.k8s.io", "v1", "IngressClass"), "ingressclasses", false},
		{gvk("policy", "v1", "PodDisruptionBudget"), "poddisruptionbudgets", true},
		{gvk("rbac.authorization.k8s.io", "v1", "ClusterRole"), "clusterroles", false},
		{gvk("rbac.authorization.k8s.io", "v1", "RoleBinding"), "rolebindings", true},
		{gvk("storage.k8s.io", "v1", "StorageClass"), "storageclasses", false},
		{gvk("scheduling.k8s.io", "v1", "PriorityClass"), "priorityclasses", false},
		{gvk("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy"), "validatingadmissionpolicies", false},
		{gvk("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"), "validatingwebhookconfigurations", false},
		{gvk("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"), "mutatingwebhookconfigurations", false},
		{gvk("admissionregistration.k8s.io", "v1beta1", "MutatingAdmissionPolicy"), "mutatingadmissionpolicies", false},
		{gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"), "customresourcedefinitions", false},
		{gvk("apiregistration.k8s.io", "v1", "APIService"), "apiservices", false},
		{gvk("coordination.k8s.io", "v1", "Lease"), "leases", true},
		{gvk("batch", "v1", "CronJob"), "cronjobs", true},
		{gvk("autoscaling", "v2", "HorizontalPodAutoscaler"), "horizontalpodautoscalers", true},
		{gvk("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema"), "flowschemas", false},
		{gvk("authorization.k8s.io", "v1", "LocalSubjectAccessReview"), "localsubjectaccessreviews", true},
		{gvk("resource.k8s.io", "v1", "ResourceSlice"), "resourceslices", false},
		{gvk("internal.apiserver.k8s.io", "v1alpha1", "StorageVersion"), "storageversions", false},
	} {
		t.Run(tc.gvk.String(), func(t *testing.T) {
			gvr, namespaced, ok := Builtin(tc.gvk)
			if !ok {
				t.Fatal("not built in")
			}
			if gvr != tc.gvk.GroupVersion().WithResource(tc.resource) || namespaced != tc.namespaced {
				t.Errorf("got %v namespaced=%v, want %s namespaced=%v", gvr, namespaced, tc.resource, tc.namespaced)
			}
			m, err := NewKinds().Resource(tc.gvk, false)
			if err != nil || m.Source != FromBuiltin || m.Resource != gvr || m.Namespaced != namespaced {
				t.Errorf("Kinds.Resource = %+v, %v", m, err)
			}
		})
	}
	for _, g := range []schema.GroupVersionKind{
		gvk("cert-manager.io", "v1", "Certificate"), gvk("", "v2", "Pod"), gvk("apps", "v1", "Pod"),
		gvk("extensions", "v1beta1", "Deployment"), gvk("apiextensions.k8s.io", "v1beta1", "CustomResourceDefinition"),
	} {
		if _, _, ok := Builtin(g); ok {
			t.Errorf("%v is not served by kube-apiserver 1.37, yet Builtin knows it", g)
		}
	}
}

// clusterScopedInAPI are the kinds k8s.io/api v0.37.2 marks
// +genclient:nonNamespaced, i.e. every cluster-scoped kind of client-go's
// scheme (found with grep in the module's types.go files), and the two
// cluster-scoped kinds of other modules' schemes.
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
	// k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator
	"CustomResourceDefinition", "APIService",
}

// TestBuiltinScopes: the apiserver's discovery and the client's type
// declarations agree on every kind's scope, and every kind client-go's
// scheme has at a version the apiserver serves is built in.
func TestBuiltinScopes(t *testing.T) {
	b, err := builtins()
	if err != nil {
		t.Fatal(err)
	}
	for g, k := range b.byGVK {
		if cluster := slices.Contains(clusterScopedInAPI, g.Kind); cluster == k.namespaced {
			t.Errorf("%v: discovery says namespaced=%v; the API types say cluster-scoped=%v", g, k.namespaced, cluster)
		}
	}
	served := 0
	for g := range scheme.Scheme.AllKnownTypes() {
		if _, ok := b.versions[g.GroupKind()]; !ok || !slices.Contains(b.versions[g.GroupKind()], g.Version) {
			continue
		}
		served++
		if _, _, ok := Builtin(g); !ok {
			t.Errorf("%v: served, yet not built in", g)
		}
	}
	if len(b.byGVK) < 100 || served < 95 {
		t.Errorf("%d built-in kinds, %d of the scheme's: the documents were not read whole", len(b.byGVK), served)
	}
}

// TestDiscoveryDocumentsAreKubernetes: the embedded documents are
// Kubernetes' own, byte for byte, where the k8s.io/kubernetes module is
// in the module cache.
func TestDiscoveryDocumentsAreKubernetes(t *testing.T) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skip("no go command:", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@v1.37.2", "api", "discovery")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("k8s.io/kubernetes v1.37.2 is not in the module cache")
	}
	for _, f := range []string{"api__v1.json", "aggregated_v2.json"} {
		want, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := discovery.ReadFile("discovery/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("discovery/%s differs from %s", f, filepath.Join(dir, f))
		}
	}
}

const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"kind":"Widget","plural":"widgets"},
"versions":[{"name":"v1","served":true,"storage":true},{"name":"v1alpha1","served":false,"storage":false}]}}`

func TestKindsResource(t *testing.T) {
	for _, tc := range []struct {
		name         string
		gvk          schema.GroupVersionKind
		hasNamespace bool
		resource     string
		namespaced   bool
		source       Source
		note         string // in Notes, or the error with Strict
	}{
		{name: "built in", gvk: gvk("apps", "v1", "Deployment"), resource: "deployments", namespaced: true, source: FromBuiltin},
		{name: "from the CRD", gvk: gvk("example.com", "v1", "Widget"), resource: "widgets", namespaced: true, source: FromCRD},
		{name: "a version the CRD does not serve", gvk: gvk("example.com", "v1alpha1", "Widget"), resource: "widgets", namespaced: true, source: Guessed,
			note: "example.com/v1alpha1 Widget: the CustomResourceDefinition at crds.yaml:1 serves versions v1 only; taken as namespaced resource \"widgets\""},
		{name: "no CRD, a namespace", gvk: gvk("monitoring.coreos.com", "v1", "ServiceMonitor"), hasNamespace: true, resource: "servicemonitors", namespaced: true, source: Guessed,
			note: "monitoring.coreos.com/v1 ServiceMonitor: not a built-in kind, and no CustomResourceDefinition given for it (--crd); taken as namespaced resource \"servicemonitors\""},
		{name: "no CRD, no namespace", gvk: gvk("example.com", "v1", "Policy"), resource: "policies", source: Guessed,
			note: "example.com/v1 Policy: not a built-in kind, and no CustomResourceDefinition given for it (--crd); taken as cluster-scoped resource \"policies\""},
		{name: "a built-in kind at a version no longer served", gvk: gvk("apps", "v1beta1", "Deployment"), resource: "deployments", namespaced: true, source: Guessed,
			note: "apps/v1beta1 Deployment: kube-apiserver 1.37 serves Deployment.apps at v1 only; taken as namespaced resource \"deployments\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kinds := NewKinds()
			if err := kinds.AddCRD("crds.yaml:1", []byte(widgetCRD)); err != nil {
				t.Fatal(err)
			}
			m, err := kinds.Resource(tc.gvk, tc.hasNamespace)
			if err != nil {
				t.Fatal(err)
			}
			want := Mapping{Resource: tc.gvk.GroupVersion().WithResource(tc.resource), Namespaced: tc.namespaced, Source: tc.source}
			if m != want {
				t.Errorf("got %+v, want %+v", m, want)
			}
			var notes []string
			if tc.note != "" {
				notes = []string{tc.note}
			}
			if got := kinds.Notes(); !slices.Equal(got, notes) && !(len(got) == 0 && len(notes) == 0) {
				t.Errorf("notes %q, want %q", got, notes)
			}
			kinds.Strict = true
			_, err = kinds.Resource(tc.gvk, tc.hasNamespace)
			switch {
			case tc.source == Guessed && (err == nil || !strings.HasPrefix(err.Error(), "unknown kind "+kindString(tc.gvk)+": ") || !strings.HasSuffix(err.Error(), "(--strict-kinds)")):
				t.Errorf("strict: error %v", err)
			case tc.source != Guessed && err != nil:
				t.Errorf("strict: %v", err)
			}
		})
	}
}

func TestAddCRD(t *testing.T) {
	crd := func(plural, scope, versions string) string {
		return `{"metadata":{"name":"x"},"spec":{"group":"example.com","scope":"` + scope + `","names":{"kind":"Widget","plural":"` + plural + `"},"versions":` + versions + `}}`
	}
	for _, tc := range []struct {
		name string
		docs []string
		err  string
	}{
		{name: "the same definition twice", docs: []string{widgetCRD, widgetCRD}},
		{name: "no plural", docs: []string{crd("", "Namespaced", `[{"name":"v1","served":true}]`)}, err: `b.yaml:1: CustomResourceDefinition "x": spec.names.plural is required`},
		{name: "no versions", docs: []string{crd("widgets", "Namespaced", `[]`)}, err: `b.yaml:1: CustomResourceDefinition "x": spec.versions is required`},
		{name: "a bad scope", docs: []string{crd("widgets", "namespaced", `[{"name":"v1","served":true}]`)}, err: `b.yaml:1: CustomResourceDefinition "x": spec.scope "namespaced": want Namespaced or Cluster`},
		{name: "another scope", docs: []string{widgetCRD, crd("widgets", "Cluster", `[{"name":"v1","served":true}]`)},
			err: `b.yaml:2: CustomResourceDefinition "x": Widget.example.com is defined at b.yaml:1 as widgets (Namespaced), here as widgets (Cluster)`},
		{name: "not JSON", docs: []string{`[`}, err: "b.yaml:1: CustomResourceDefinition: unexpected end of JSON input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kinds := NewKinds()
			var err error
			for i, d := range tc.docs {
				if err = kinds.AddCRD("b.yaml:"+string(rune('1'+i)), []byte(d)); err != nil {
					break
				}
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
}
