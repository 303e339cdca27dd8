package kyverno

// What a Kyverno policy reads through Kyverno's resource library
// (resource.Get, resource.List): one reference of tollgate's store per
// resource it names, so that the cluster's informers, the offline
// readers, the background audit and the RBAC messages follow it as they
// follow a tollgate policy's spec.references.

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/references"
)

// declareResources finds the resources a Kyverno policy reads through
// resource.Get and resource.List, declared as references of the store
// holding whole objects (nil when it calls neither), or, by field, what
// tollgate cannot honour: another function of the library, an apiVersion
// or resource that is not a string literal, a resource kube-apiserver does
// not serve built in (tollgate maps resources to kinds when the policy
// loads), a subresource, and Secrets, whose data tollgate never holds.
func declareResources(k *object, kind string) (*Resources, field.ErrorList) {
	namespaced := kind == NamespacedValidatingPolicy
	var errs field.ErrorList
	var calls []Call
	where := map[Call]*field.Path{} // the first expression making each call
	eachExpression(&k.Spec, func(p *field.Path, expr string) {
		found, problems := ResourceCalls(expr, namespaced)
		for _, msg := range problems {
			errs = append(errs, field.Invalid(p, strings.TrimSpace(expr), msg))
		}
		for _, c := range found {
			if where[c] == nil {
				where[c] = p
				calls = append(calls, c)
			}
		}
	})
	if len(errs) > 0 || len(calls) == 0 {
		return nil, errs
	}
	res := &Resources{}
	if namespaced {
		res.Namespace = k.Namespace
	}
	names := map[string]bool{}
	for _, c := range calls {
		p, named := where[c], c.APIVersion+" "+c.Resource
		gv, err := schema.ParseGroupVersion(c.APIVersion)
		if err != nil {
			errs = append(errs, field.Invalid(p, named, fmt.Sprintf("resource.Get/List: apiVersion %q: %v", c.APIVersion, err)))
			continue
		}
		gvk, scoped, ok := manifest.BuiltinKind(gv.WithResource(c.Resource))
		switch {
		case strings.Contains(c.Resource, "/"):
			errs = append(errs, field.Invalid(p, named, "resource.Get/List of a subresource: tollgate holds objects, not subresources"))
			continue
		case !ok:
			errs = append(errs, field.Invalid(p, named, fmt.Sprintf("resource.Get/List of a resource kube-apiserver %s does not serve built in: tollgate maps a Kyverno policy's resources to kinds when it loads (a tollgate policy's spec.references reads any kind)", manifest.APIServerVersion)))
			continue
		case gvk.Group == "" && gvk.Kind == "Secret":
			errs = append(errs, field.Invalid(p, named, "resource.Get/List of Secrets: tollgate holds a Secret's metadata only, never its data (a tollgate policy's spec.references can check that one exists)"))
			continue
		}
		name := c.Resource
		for i := 2; names[name]; i++ {
			name = fmt.Sprintf("%s_%d", c.Resource, i)
		}
		names[name] = true
		decl, derrs := references.Compile(references.Declaration{Name: name, APIVersion: c.APIVersion, Kind: gvk.Kind}, p)
		if len(derrs) > 0 {
			errs = append(errs, derrs...)
			continue
		}
		res.Resources = append(res.Resources, Resource{Call: c, Decl: decl, Namespaced: scoped})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return res, nil
}

// declarations are the store's references of what a Kyverno
// policy reads (nil for none).
func declarations(res *Resources) []*references.Compiled {
	if res == nil {
		return nil
	}
	out := make([]*references.Compiled, len(res.Resources))
	for i, c := range res.Resources {
		out[i] = c.Decl
	}
	return out
}
