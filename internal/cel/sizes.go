package cel

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// inputStats are the review's sizes (stats) for the bound: the largest
// list length, map size and string length in object, oldObject, request
// and namespaceObject. ok false when an object is of a kind they cannot be
// read from (then no fast path).
func inputStats(in *Input) (stats, bool) {
	var st stats
	if (in.ObjectJSON != nil || in.OldObjectJSON != nil) && in.Check() != nil {
		return stats{}, false // evaluating fails
	}
	for i, o := range []struct {
		raw []byte
		obj runtime.Object
	}{{in.ObjectJSON, in.Object}, {in.OldObjectJSON, in.OldObject}} {
		var s stats
		switch u, isU := o.obj.(*unstructured.Unstructured); {
		case o.raw != nil:
			if d := in.docs[i]; d != nil { // the sizes Check read
				s = d.sizes
			}
		case o.obj == nil:
		case isU && u != nil:
			s = objectStats(u.Object)
		default:
			return stats{}, false
		}
		st = maxStats(st, s)
	}
	st = maxStats(st, requestStats(in))
	if in.NamespaceObject != nil {
		st = maxStats(st, namespaceStats(in.NamespaceObject))
	}
	return st, true
}

// namespaceStats bound namespaceObject, the fields of the namespace the
// apiserver's CreateNamespaceObject copies: fewer than 32 fields a level,
// named in fewer than 64 bytes; numbers and timestamps (RFC 3339), shorter
// than 64 bytes as strings; the names, labels, annotations, finalizers,
// phase and conditions, walked. A string's code points are at most its
// bytes.
func namespaceStats(ns *corev1.Namespace) stats {
	st := stats{l: 32, tr: 64}
	str := func(ss ...string) {
		for _, s := range ss {
			st.tr = max(st.tr, float64(len(s)))
		}
	}
	n := func(l int) { st.l = max(st.l, float64(l)) }
	m := &ns.ObjectMeta
	str(m.Name, m.GenerateName, m.Namespace, string(m.UID), m.ResourceVersion, string(ns.Status.Phase))
	for _, kv := range []map[string]string{m.Labels, m.Annotations} {
		n(len(kv))
		for k, v := range kv {
			str(k, v)
		}
	}
	n(len(m.Finalizers))
	str(m.Finalizers...)
	n(len(ns.Spec.Finalizers))
	for _, f := range ns.Spec.Finalizers {
		str(string(f))
	}
	n(len(ns.Status.Conditions))
	for _, c := range ns.Status.Conditions {
		str(string(c.Type), string(c.Status), c.Reason, c.Message)
	}
	return st
}

// objectStats are the sizes of an unstructured object, metadata apart.
func objectStats(obj map[string]any) stats {
	s := stats{l: float64(len(obj))}
	for k, v := range obj {
		s.tr = max(s.tr, float64(len(k)))
		if k == "metadata" {
			walkStats(v, &s.l, &s.tm)
		} else {
			walkStats(v, &s.l, &s.tr)
		}
	}
	return s
}

func maxStats(a, b stats) stats { return stats{max(a.l, b.l), max(a.tm, b.tm), max(a.tr, b.tr)} }

// requestStats bound the request variable (CreateAdmissionRequest of the
// input): its fields' maps (fewer than 32 entries) and names (shorter
// than 64 bytes), the kinds', resources' and user's strings and lists.
func requestStats(in *Input) stats {
	st := stats{l: 32, tr: 64}
	str := func(ss ...string) {
		for _, s := range ss {
			st.tr = max(st.tr, float64(len(s)))
		}
	}
	str(in.Kind.Group, in.Kind.Version, in.Kind.Kind, in.Resource.Group, in.Resource.Version, in.Resource.Resource,
		in.SubResource, in.Name, in.Namespace, in.Operation)
	if u := in.User; u != nil {
		str(u.GetName(), u.GetUID())
		str(u.GetGroups()...)
		st.l = max(st.l, float64(len(u.GetGroups())))
		extra := u.GetExtra()
		st.l = max(st.l, float64(len(extra)))
		for k, v := range extra {
			str(k)
			str(v...)
			st.l = max(st.l, float64(len(v)))
		}
	}
	return st
}

// walkStats reads the sizes of an unstructured value: lists' and maps' into
// l, strings' (and keys') into t.
func walkStats(v any, l, t *float64) {
	switch x := v.(type) {
	case map[string]any:
		*l = max(*l, float64(len(x)))
		for k, e := range x {
			*t = max(*t, float64(len(k)))
			walkStats(e, l, t)
		}
	case []any:
		*l = max(*l, float64(len(x)))
		for _, e := range x {
			walkStats(e, l, t)
		}
	case string:
		*t = max(*t, float64(len(x)))
	}
}
