package policy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ParamKinds returns the param kinds the set's policies read, each once.
func (s *Set) ParamKinds() []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	for _, p := range s.Policies {
		var k *admissionregistrationv1.ParamKind
		switch {
		case p.VAP != nil:
			k = p.VAP.Policy.Spec.ParamKind
		case p.MAP != nil:
			k = p.MAP.Policy.Spec.ParamKind
		}
		if k == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(k.APIVersion)
		if err != nil {
			continue
		}
		gvk := gv.WithKind(k.Kind)
		if !seen[gvk] {
			seen[gvk] = true
			out = append(out, gvk)
		}
	}
	return out
}
