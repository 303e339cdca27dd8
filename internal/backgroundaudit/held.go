package backgroundaudit

// What an audited informer keeps of each object: its JSON, as the engine
// reads it, rather than the decoded map (about a fifth of the memory), cut
// as strip says, and without resourceVersion, which a CREATE never carries
// and which is all a controller's no-op update changes: equal JSON, nothing
// a policy reads has changed. Name, namespace and uid stay readable, for
// the store's keys, and a Namespace's labels, for the namespaceSelectors.

import (
	"bytes"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/internal/audit"
)

// held is an object as an audited informer keeps it.
type held struct {
	metav1.TypeMeta // shared by every object of the resource
	Name, Namespace string
	UID             types.UID
	ResourceVersion string
	// Labels are a Namespace's, nil for other objects.
	Labels map[string]string
	// JSON is the object, apiVersion and kind set, cut, without resourceVersion.
	JSON []byte
}

// GetObjectMeta is the metadata the informer's keys and indexes read
// (meta.Accessor), made when asked: a whole ObjectMeta held with each
// object would be a tenth of the leader's heap.
func (h *held) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: h.Name, Namespace: h.Namespace, UID: h.UID, ResourceVersion: h.ResourceVersion, Labels: h.Labels}
}

// DeepCopyObject copies the labels; JSON is never written to.
func (h *held) DeepCopyObject() runtime.Object {
	c := *h
	c.Labels = maps.Clone(h.Labels)
	return &c
}

// hold is the audited informers' transform for r's objects.
func (s strip) hold(r audit.Resource) func(any) (any, error) {
	// One copy of these for all r's objects.
	typeMeta := metav1.TypeMeta{APIVersion: r.GVR.GroupVersion().String(), Kind: r.Kind}
	// Namespaces' labels are read by namespaceSelectors; other objects'
	// labels only in their JSON, by the engine.
	labels := r.GVR == namespacesResource.GVR
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil // a held object already, or a tombstone
		}
		s.cut(u)
		rv := u.GetResourceVersion()
		unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
		u.SetGroupVersionKind(r.GVR.GroupVersion().WithKind(r.Kind))
		js, err := u.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("background audit: %s %s/%s: %w", r.Kind, u.GetNamespace(), u.GetName(), err)
		}
		// The encoder's buffer grew by doubling, up to twice the JSON's
		// length, and is held for as long as the object is: the JSON in
		// such buffers was 29% of the leader's live heap at 20,000
		// objects (TestAuditScale's heap profile).
		js = bytes.Clone(js)
		h := &held{TypeMeta: typeMeta, Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(), ResourceVersion: rv, JSON: js}
		if labels {
			h.Labels = u.GetLabels()
		}
		return h, nil
	}
}

// changed tells whether an update may change what the policies make of an
// object: not when only its resourceVersion moved. managedFields and
// status count: the informers drop them unless a policy may read them
// (strip.go), so a controller's status heartbeat changes nothing held then.
func changed(old, cur *held) bool {
	return old == nil || cur == nil || !bytes.Equal(old.JSON, cur.JSON)
}
