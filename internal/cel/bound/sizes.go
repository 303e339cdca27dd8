package bound

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// StatsOf are the sizes jsonscan read of an object's JSON.
func StatsOf(sz jsonscan.Sizes) Stats {
	return Stats{L: float64(sz.Entries), TM: float64(sz.Apart), TR: float64(sz.Strings)}
}

// NamespaceStats bound namespaceObject, the fields of the namespace the
// apiserver's CreateNamespaceObject copies: fewer than 32 fields a level,
// named in fewer than 64 bytes; numbers and timestamps (RFC 3339), shorter
// than 64 bytes as strings; the names, labels, annotations, finalizers,
// phase and conditions, walked. A string's code points are at most its
// bytes.
func NamespaceStats(ns *corev1.Namespace) Stats {
	st := Stats{L: 32, TR: 64}
	str := func(ss ...string) {
		for _, s := range ss {
			st.TR = max(st.TR, float64(len(s)))
		}
	}
	n := func(l int) { st.L = max(st.L, float64(l)) }
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

// ObjectStats are the sizes of an unstructured object, metadata apart.
func ObjectStats(obj map[string]any) Stats {
	s := Stats{L: float64(len(obj))}
	for k, v := range obj {
		s.TR = max(s.TR, float64(len(k)))
		if k == "metadata" {
			walkStats(v, &s.L, &s.TM)
		} else {
			walkStats(v, &s.L, &s.TR)
		}
	}
	return s
}

// Max is the larger of a and b in each size.
func Max(a, b Stats) Stats { return Stats{max(a.L, b.L), max(a.TM, b.TM), max(a.TR, b.TR)} }

// RequestStats bound the request variable (CreateAdmissionRequest of the
// input): its fields' maps (fewer than 32 entries) and names (shorter
// than 64 bytes), the kinds', resources' and user's strings and lists;
// fields are the request's strings (kind, resource, subresource, name,
// namespace, operation).
func RequestStats(u user.Info, fields ...string) Stats {
	st := Stats{L: 32, TR: 64}
	str := func(ss ...string) {
		for _, s := range ss {
			st.TR = max(st.TR, float64(len(s)))
		}
	}
	str(fields...)
	if u != nil {
		str(u.GetName(), u.GetUID())
		str(u.GetGroups()...)
		st.L = max(st.L, float64(len(u.GetGroups())))
		extra := u.GetExtra()
		st.L = max(st.L, float64(len(extra)))
		for k, v := range extra {
			str(k)
			str(v...)
			st.L = max(st.L, float64(len(v)))
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
