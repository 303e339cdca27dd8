package manifest

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// APIServerVersion is the kube-apiserver whose built-in kinds tollgate knows.
const APIServerVersion = "1.37"

// discovery holds kube-apiserver 1.37's own discovery documents, copied
// unchanged from k8s.io/kubernetes v1.37.2 (api/discovery/api__v1.json and
// api/discovery/aggregated_v2.json, which Kubernetes' hack/update-openapi-spec.sh
// records from an apiserver with every API group and version enabled). They
// name every resource the apiserver serves built in, of every group:
// apiextensions.k8s.io, apiregistration.k8s.io, admissionregistration.k8s.io,
// alpha versions included. To follow a newer apiserver, copy them again.
//
//go:embed discovery/api__v1.json discovery/aggregated_v2.json
var discovery embed.FS

// builtin is how kube-apiserver serves one built-in kind.
type builtin struct {
	resource   string
	namespaced bool
}

// builtinKinds maps every built-in kind, by group, version and kind, and by
// group and kind (for a version the apiserver no longer serves).
type builtinKinds struct {
	byGVK map[schema.GroupVersionKind]builtin
	byGK  map[schema.GroupKind]builtin
	// byGVR maps each resource back to its kind.
	byGVR map[schema.GroupVersionResource]schema.GroupVersionKind
	// versions are the served versions of each group and kind.
	versions map[schema.GroupKind][]string
}

// builtins reads the discovery documents once.
var builtins = sync.OnceValues(readBuiltins)

func readBuiltins() (*builtinKinds, error) {
	b := &builtinKinds{
		byGVK:    map[schema.GroupVersionKind]builtin{},
		byGK:     map[schema.GroupKind]builtin{},
		byGVR:    map[schema.GroupVersionResource]schema.GroupVersionKind{},
		versions: map[schema.GroupKind][]string{},
	}
	core, err := discovery.ReadFile("discovery/api__v1.json")
	if err != nil {
		return nil, err
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(core, &list); err != nil {
		return nil, fmt.Errorf("discovery/api__v1.json: %w", err)
	}
	for _, r := range list.APIResources {
		if err := b.add(schema.GroupVersionKind{Version: "v1", Kind: r.Kind}, r.Name, r.Namespaced); err != nil {
			return nil, err
		}
	}
	groups, err := discovery.ReadFile("discovery/aggregated_v2.json")
	if err != nil {
		return nil, err
	}
	var agg apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(groups, &agg); err != nil {
		return nil, fmt.Errorf("discovery/aggregated_v2.json: %w", err)
	}
	for _, g := range agg.Items {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				if r.ResponseKind == nil {
					continue
				}
				gvk := schema.GroupVersionKind{Group: g.Name, Version: v.Version, Kind: r.ResponseKind.Kind}
				if err := b.add(gvk, r.Resource, r.Scope == apidiscoveryv2.ScopeNamespace); err != nil {
					return nil, err
				}
			}
		}
	}
	return b, nil
}

// add records one resource; subresources (pods/status) are not kinds of
// their own. A kind served as two resources, or in two scopes, is an error:
// the documents would not say how to map it.
func (b *builtinKinds) add(gvk schema.GroupVersionKind, resource string, namespaced bool) error {
	if strings.Contains(resource, "/") {
		return nil
	}
	k := builtin{resource: resource, namespaced: namespaced}
	if prev, ok := b.byGVK[gvk]; ok && prev != k {
		return fmt.Errorf("discovery: %v is served as %s and %s", gvk, prev.resource, resource)
	}
	b.byGVK[gvk] = k
	b.byGVR[gvk.GroupVersion().WithResource(resource)] = gvk
	gk := gvk.GroupKind()
	if prev, ok := b.byGK[gk]; ok && prev != k {
		return fmt.Errorf("discovery: %v is served as %v and %v", gk, prev, k)
	}
	b.byGK[gk] = k
	b.versions[gk] = append(b.versions[gk], gvk.Version)
	return nil
}

// Builtin maps a kind kube-apiserver serves built in to its resource and
// scope; ok is false for any other kind or version.
func Builtin(gvk schema.GroupVersionKind) (gvr schema.GroupVersionResource, namespaced, ok bool) {
	b, err := builtins()
	if err != nil {
		// The embedded documents are tested; this cannot happen in a build.
		panic(err)
	}
	k, ok := b.byGVK[gvk]
	if !ok {
		return gvr, false, false
	}
	return gvk.GroupVersion().WithResource(k.resource), k.namespaced, true
}

// BuiltinKind maps a resource kube-apiserver serves built in (configmaps
// at v1) to its kind and scope; ok is false for any other resource or
// version, and for a subresource.
func BuiltinKind(gvr schema.GroupVersionResource) (gvk schema.GroupVersionKind, namespaced, ok bool) {
	b, err := builtins()
	if err != nil {
		panic(err) // as in Builtin
	}
	if gvk, ok = b.byGVR[gvr]; !ok {
		return gvk, false, false
	}
	return gvk, b.byGVK[gvk].namespaced, true
}
