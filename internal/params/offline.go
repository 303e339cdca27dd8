package params

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// builtinNamespaced are the built-in kinds commonly used as params, known
// to be namespaced without a CustomResourceDefinition saying so, and known
// (so that a missing one is not found, as in a cluster) even when no object
// of theirs is given.
var builtinNamespaced = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}: true,
	{Kind: "Secret"}:    true,
}

// NewOffline returns a store whose params are the given objects, held in
// client-go's in-memory object tracker behind a dynamic client, so that
// they are resolved by the same informers and CollectParams as in a
// cluster. A kind's resource and scope come from a
// CustomResourceDefinition among objects, else from what is known of
// built-in kinds, else from the objects (namespaced when they have a
// namespace). Objects without apiVersion or kind are an error.
func NewOffline(ctx context.Context, objects []*unstructured.Unstructured) (*Store, error) {
	mapper := meta.NewDefaultRESTMapper(nil)
	type mapped struct {
		resource schema.GroupVersionResource
		scope    meta.RESTScope
	}
	kinds := map[schema.GroupVersionKind]mapped{}
	add := func(gvk schema.GroupVersionKind, plural string, namespaced bool) {
		scope := meta.RESTScopeRoot
		if namespaced {
			scope = meta.RESTScopeNamespace
		}
		gvr := gvk.GroupVersion().WithResource(plural)
		mapper.AddSpecific(gvk, gvr, gvr.GroupVersion().WithResource(strings.ToLower(gvk.Kind)), scope)
		kinds[gvk] = mapped{resource: gvr, scope: scope}
	}
	for gk := range builtinNamespaced {
		gvk := gk.WithVersion("v1")
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		add(gvk, plural.Resource, true)
	}
	for _, o := range objects {
		if o.GroupVersionKind() != crdKind {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
		scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
		versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
		for _, v := range versions {
			if name, ok := v.(map[string]any)["name"].(string); ok {
				add(schema.GroupVersionKind{Group: group, Version: name, Kind: kind}, plural, scope == "Namespaced")
			}
		}
	}
	for _, o := range objects {
		gvk := o.GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return nil, fmt.Errorf("params: object %q has no apiVersion or kind", o.GetName())
		}
		if _, ok := kinds[gvk]; !ok {
			plural, _ := meta.UnsafeGuessKindToResource(gvk)
			add(gvk, plural.Resource, builtinNamespaced[gvk.GroupKind()] || o.GetNamespace() != "")
		}
	}
	listKinds := map[schema.GroupVersionResource]string{}
	for gvk, m := range kinds {
		listKinds[m.resource] = gvk.Kind + "List"
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	for _, o := range objects {
		m := kinds[o.GroupVersionKind()]
		ns := o.GetNamespace()
		if m.scope == meta.RESTScopeRoot {
			ns = ""
		}
		if err := client.Tracker().Create(m.resource, o.DeepCopy(), ns); err != nil {
			return nil, fmt.Errorf("params: %s %q: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return newStore(ctx, client, mapper, false), nil
}

var crdKind = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
