package references

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// lastApplied is kubectl's copy of the whole object, which no policy
// needs to read twice.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// secretKind is the core Secret: held by name and existence only.
var secretKind = schema.GroupKind{Kind: "Secret"}

// Trim is what the store keeps of an object: without managedFields and
// kubectl's last-applied copy; a Secret as apiVersion, kind and its
// metadata alone, never its type or data, which is all a cluster's
// metadata-only informer receives of it (cluster.go), so that a policy
// decides the same offline and in a cluster. The object given is not
// changed.
func Trim(gvk schema.GroupVersionKind, obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	if gvk.GroupKind() == secretKind {
		out = map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": obj["metadata"]}
	}
	meta, ok := out["metadata"].(map[string]any)
	if !ok {
		return out
	}
	m := make(map[string]any, len(meta))
	for k, v := range meta {
		if k != "managedFields" {
			m[k] = v
		}
	}
	if ann, ok := m["annotations"].(map[string]any); ok {
		if _, has := ann[lastApplied]; has {
			a := make(map[string]any, len(ann))
			for k, v := range ann {
				if k != lastApplied {
					a[k] = v
				}
			}
			m["annotations"] = a
		}
	}
	out["metadata"] = m
	return out
}

// project is Trim, then what fields keep (all of it when nil).
func project(gvk schema.GroupVersionKind, obj map[string]any, fields *fieldNode) map[string]any {
	out := Trim(gvk, obj)
	if fields == nil {
		return out
	}
	return fields.keep(out).(map[string]any)
}
