// Package defaulting defaults built-in objects exactly as the apiserver does
// before admission sees them, with the defaulting functions Kubernetes
// generates (k8s.io/kubernetes/pkg/apis/<group>/<version>, at the version in
// go.mod). A Pod volume that names no source becomes an emptyDir, a container
// gets its imagePullPolicy and terminationMessagePath, a Deployment its
// strategy and revisionHistoryLimit, and so on.
//
// The apiserver decodes a request's body into the typed object of its version,
// defaulting it, converts it to the internal version, and converts it back to
// the version of the webhook's request. Object does the same. Defaults that
// depend on feature gates follow the gates' defaults of the Kubernetes version
// in go.mod (k8s.io/apiserver's DefaultFeatureGate, which tollgate never
// changes).
//
// Like the apiserver's default field validation (Warn), fields a built-in
// kind does not have are dropped, each reported as a warning worded as the
// apiserver words it; a value of the wrong type is an error naming the field.
// Kinds the apiserver does not build in (custom resources) are returned
// unchanged: their defaults come from their CRD's schema.
package defaulting

import (
	"bytes"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	admissionregistration "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	apiserverinternal "k8s.io/kubernetes/pkg/apis/apiserverinternal/install"
	apps "k8s.io/kubernetes/pkg/apis/apps/install"
	autoscaling "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	batch "k8s.io/kubernetes/pkg/apis/batch/install"
	certificates "k8s.io/kubernetes/pkg/apis/certificates/install"
	coordination "k8s.io/kubernetes/pkg/apis/coordination/install"
	core "k8s.io/kubernetes/pkg/apis/core/install"
	discovery "k8s.io/kubernetes/pkg/apis/discovery/install"
	events "k8s.io/kubernetes/pkg/apis/events/install"
	flowcontrol "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	networking "k8s.io/kubernetes/pkg/apis/networking/install"
	node "k8s.io/kubernetes/pkg/apis/node/install"
	policy "k8s.io/kubernetes/pkg/apis/policy/install"
	rbac "k8s.io/kubernetes/pkg/apis/rbac/install"
	resource "k8s.io/kubernetes/pkg/apis/resource/install"
	scheduling "k8s.io/kubernetes/pkg/apis/scheduling/install"
	storage "k8s.io/kubernetes/pkg/apis/storage/install"
	storagemigration "k8s.io/kubernetes/pkg/apis/storagemigration/install"
)

// Groups are the API groups whose kinds are defaulted ("" is the core group).
var Groups = []string{
	"", "admissionregistration.k8s.io", "apps", "autoscaling", "batch", "certificates.k8s.io",
	"coordination.k8s.io", "discovery.k8s.io", "events.k8s.io", "flowcontrol.apiserver.k8s.io",
	"internal.apiserver.k8s.io", "networking.k8s.io", "node.k8s.io", "policy",
	"rbac.authorization.k8s.io", "resource.k8s.io", "scheduling.k8s.io", "storage.k8s.io",
	"storagemigration.k8s.io",
}

// codec is the scheme of the groups above, with their internal versions,
// conversions and defaulting functions, and a strict JSON serializer over it.
type codec struct {
	scheme *runtime.Scheme
	json   *kjson.Serializer
}

// theCodec is built on first use; it is only read afterwards.
var theCodec = sync.OnceValue(func() *codec {
	s := runtime.NewScheme()
	for _, install := range []func(*runtime.Scheme){
		core.Install, admissionregistration.Install, apps.Install, autoscaling.Install, batch.Install,
		certificates.Install, coordination.Install, discovery.Install, events.Install, flowcontrol.Install,
		apiserverinternal.Install, networking.Install, node.Install, policy.Install, rbac.Install,
		resource.Install, scheduling.Install, storage.Install, storagemigration.Install,
	} {
		install(s)
	}
	return &codec{
		scheme: s,
		json:   kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{Strict: true}),
	}
})

// Known says whether gvk is a built-in kind that Object defaults.
func Known(gvk schema.GroupVersionKind) bool {
	return gvk.Version != runtime.APIVersionInternal && theCodec().scheme.Recognizes(gvk)
}

// Object returns the JSON of a gvk object as the apiserver hands it to
// admission: decoded into its typed object, defaulted, converted to the
// internal version and back, encoded. Warnings name the fields the kind does
// not have, which are dropped. A kind that is not built in comes back
// unchanged, without warnings.
func Object(gvk schema.GroupVersionKind, data []byte) ([]byte, []string, error) {
	if !Known(gvk) {
		return data, nil, nil
	}
	c := theCodec()
	into, err := c.scheme.New(gvk)
	if err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", kindName(gvk), err)
	}
	obj, _, err := c.json.Decode(data, &gvk, into)
	var warnings []string
	if err != nil {
		strict, ok := runtime.AsStrictDecodingError(err)
		if !ok {
			// Worded as the apiserver's 400 for a body it cannot decode.
			return nil, nil, fmt.Errorf("%s in version %q cannot be handled as a %s: %w", gvk.Kind, gvk.GroupVersion().String(), gvk.Kind, err)
		}
		// The object is decoded; the errors are the unknown or duplicate
		// fields the apiserver warns about and drops.
		for _, e := range strict.Errors() {
			warnings = append(warnings, e.Error())
		}
	}
	c.scheme.Default(obj)
	internal, err := c.scheme.ConvertToVersion(obj, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, nil, fmt.Errorf("convert %s to the internal version: %w", kindName(gvk), err)
	}
	out, err := c.scheme.ConvertToVersion(internal, gvk.GroupVersion())
	if err != nil {
		return nil, nil, fmt.Errorf("convert %s from the internal version: %w", kindName(gvk), err)
	}
	var buf bytes.Buffer
	if err := c.json.Encode(out, &buf); err != nil {
		return nil, nil, fmt.Errorf("encode %s: %w", kindName(gvk), err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), warnings, nil
}

// kindName is how the apiserver names a kind in errors: Pod, Deployment.apps.
func kindName(gvk schema.GroupVersionKind) string {
	return gvk.GroupKind().String()
}
