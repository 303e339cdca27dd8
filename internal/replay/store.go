package replay

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/tollgate-dev/tollgate/internal/namespaces"
)

// store holds what the log says is stored, as far as replay needs it: the
// last stored version of each object some policy could see in an UPDATE
// or DELETE (the oldObject of the next request for it), and every
// namespace's labels, for namespace selectors. Its memory is bounded by
// those objects, not by the log.
type store struct {
	objects map[objectKey][]byte
	// labels of the namespaces the log created or changed; given holds
	// those given on the command line, the log's overriding them.
	labels map[string]map[string]string
	given  map[string]map[string]string
	// keep says which resources' objects are kept.
	keep func(schema.GroupResource) bool
	// unknown are the namespaces looked up that neither held.
	unknown map[string]bool
}

type objectKey struct {
	resource        schema.GroupResource
	namespace, name string
}

func newStore(given map[string]map[string]string, keep func(schema.GroupResource) bool) *store {
	return &store{objects: map[objectKey][]byte{}, labels: map[string]map[string]string{}, given: given, keep: keep, unknown: map[string]bool{}}
}

func keyOf(ref *auditv1.ObjectReference) objectKey {
	return objectKey{resource: schema.GroupResource{Group: ref.APIGroup, Resource: ref.Resource}, namespace: ref.Namespace, name: ref.Name}
}

// old is the object as stored before the event, nil if the log has not held it.
func (s *store) old(ev *auditv1.Event) []byte { return s.objects[keyOf(ev.ObjectRef)] }

// record takes in what a completed event stored: the response object of a
// write that succeeded and was not a dry run.
func (s *store) record(ev *auditv1.Event, op string) {
	if !succeeded(ev) || !isObject(ev) || dryRun(ev) {
		return
	}
	h := head(ev.ResponseObject.Raw)
	ref := ev.ObjectRef
	key := keyOf(ref)
	if key.name == "" {
		key.name = h.Metadata.Name // a create names the object in its response
	}
	gone := op == "DELETE" && h.Metadata.DeletionTimestamp == nil
	if ref.APIGroup == "" && ref.Resource == "namespaces" {
		if gone {
			delete(s.labels, key.name)
		} else {
			s.labels[key.name] = h.Metadata.Labels
		}
	}
	if !s.keep(key.resource) {
		return
	}
	if gone {
		delete(s.objects, key)
		return
	}
	s.objects[key] = ev.ResponseObject.Raw
}

// namespace answers the engine's namespace lookups: the log's labels, else
// those given; a namespace neither holds is unknown.
func (s *store) namespace(name string) (*corev1.Namespace, bool) {
	if l, ok := s.labels[name]; ok {
		return namespaces.Of(name, l), true
	}
	if l, ok := s.given[name]; ok {
		return namespaces.Of(name, l), true
	}
	s.unknown[name] = true
	return namespaces.Of(name, nil), false
}

func dryRun(ev *auditv1.Event) bool {
	for _, v := range queryValues(ev.RequestURI)["dryRun"] {
		if v == "All" {
			return true
		}
	}
	return false
}
