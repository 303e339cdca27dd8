package kyverno

// Kyverno's resource library (github.com/kyverno/sdk,
// extensions/cel/libs/resource), on tollgate's store of referenced
// objects: resource.Get and resource.List (and get, list) read the objects
// a cluster's informers (or the files given offline) hold, as Kyverno's
// reads them from the apiserver. Its Post and ToGVR are refused at load.

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	celgo "github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/tollgate-dev/tollgate/internal/cel"
	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// resourceVar is the variable Kyverno's resource library is read by.
const resourceVar = "resource"

// The functions a call of Kyverno's resource library is rewritten to, with
// the request as their first argument (resourceMacro).
const (
	getFunction  = "__tollgate_kyverno_resource_get__"
	listFunction = "__tollgate_kyverno_resource_list__"
)

// Resource is a resource a Kyverno policy reads: its declaration in
// tollgate's store, and whether it is namespaced.
type Resource struct {
	Call
	Decl       *refs.Compiled
	Namespaced bool
}

// Resources are what a Kyverno policy reads through the resource
// library.
type Resources struct {
	// Namespace is a NamespacedValidatingPolicy's, which its calls read.
	Namespace string
	Resources []Resource
}

// library is the resource library of one compiled policy: the
// resources it reads and the store they are read from (nil: none).
type library struct {
	res   *Resources
	store *refs.Store
}

// bound is how a policy calling Kyverno's resource library is compiled
// again with a store (Compiled.ForStore), and each store's.
type bound struct {
	compile func(*refs.Store) (*cel.VAP, *Compiled, error)
	mu      sync.Mutex
	byStore map[*refs.Store]compiledFor
}

type compiledFor struct {
	validator *cel.VAP
	compiled  *Compiled
}

// ForStore is the policy reading Kyverno's resource library from store,
// compiled once per store; nil, nil when it calls none (then the policy
// compiled by Compile reads no store). The functions of a compiled program
// are bound when it is made, and the apiserver's evaluator has no way to
// pass them a store per request.
func (c *Compiled) ForStore(store *refs.Store) (*cel.VAP, *Compiled, error) {
	b := c.bound
	if b == nil || store == nil {
		return nil, nil, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if f, ok := b.byStore[store]; ok {
		return f.validator, f.compiled, nil
	}
	v, compiled, err := b.compile(store)
	if err != nil {
		return nil, nil, err
	}
	if b.byStore == nil {
		b.byStore = map[*refs.Store]compiledFor{}
	}
	b.byStore[store] = compiledFor{v, compiled}
	return v, compiled, nil
}

// resourceOptions declare the resource library for a policy that
// reads res from store: a macro rewrites resource.Get(...) and
// resource.List(...) to functions that also take the request, which says
// the object under review (a CREATE's own object is not stored yet: a
// store filled offline from the objects under check holds it, and never
// gives it back).
func resourceOptions(k *library) environment.VersionedOptions {
	str, labelMap := celgo.StringType, celgo.MapType(celgo.StringType, celgo.StringType)
	// Kyverno declares map(string, google.protobuf.Any), not map(string,
	// dyn): a result compared with null, or a field of it ranged over
	// (List(...).items.map(...)), does not compile there (dyn(...) does),
	// and must not here.
	result := celgo.MapType(celgo.StringType, celgo.AnyType)
	namespaced := k.res.Namespace != ""
	var macros []celgo.Macro
	for _, fn := range []string{"Get", "get", "List", "list"} {
		arity, _ := arity(fn, namespaced)
		for _, n := range arity {
			macros = append(macros, celgo.ReceiverMacro(fn, n, resourceMacro(fn)))
		}
	}
	var get, list []*celgo.Type
	if namespaced {
		get, list = []*celgo.Type{celgo.DynType, str, str, str}, []*celgo.Type{celgo.DynType, str, str}
	} else {
		get, list = []*celgo.Type{celgo.DynType, str, str, str, str}, []*celgo.Type{celgo.DynType, str, str, str}
	}
	return environment.VersionedOptions{IntroducedVersion: version.MajorMinor(1, 0), EnvOptions: []celgo.EnvOption{
		celgo.Macros(macros...),
		celgo.Function(getFunction, celgo.Overload(getFunction+"_overload", get, result, celgo.FunctionBinding(k.get))),
		celgo.Function(listFunction,
			celgo.Overload(listFunction+"_overload", list, result, celgo.FunctionBinding(k.list)),
			celgo.Overload(listFunction+"_labels_overload", append(slices.Clone(list), labelMap), result, celgo.FunctionBinding(k.list))),
	}}
}

// resourceMacro rewrites resource.<fn>(args) to the function that
// reads it, with the request first; any other receiver's <fn> is left as
// it is.
func resourceMacro(fn string) celgo.MacroFactory {
	target := listFunction
	if fn == "Get" || fn == "get" {
		target = getFunction
	}
	return func(eh celgo.MacroExprFactory, recv celast.Expr, args []celast.Expr) (celast.Expr, *celgo.Error) {
		if recv.Kind() != celast.IdentKind || recv.AsIdent() != resourceVar {
			return nil, nil
		}
		return eh.NewCall(target, append([]celast.Expr{eh.NewIdent("request")}, args...)...), nil
	}
}

// resource is what a call reads, by its literal apiVersion and resource.
func (k *library) resource(apiVersion, resource ref.Val) (*Resource, error) {
	av, _ := apiVersion.(types.String)
	r, _ := resource.(types.String)
	for i := range k.res.Resources {
		if c := &k.res.Resources[i]; c.APIVersion == string(av) && c.Resource == string(r) {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%s %s was not declared when the policy loaded", av, r)
}

// get is resource.Get: the object, or null when there is none (Kyverno's
// answer to the apiserver's NotFound).
func (k *library) get(args ...ref.Val) ref.Val {
	req, args := args[0], args[1:]
	ns := k.res.Namespace
	if ns == "" {
		ns, args = str(args[2]), append(args[:2:2], args[3])
	}
	c, err := k.resource(args[0], args[1])
	if err == nil && k.store == nil {
		err = fmt.Errorf("%s: %w", refs.KindName(c.Decl.GVK), refs.ErrNoSource)
	}
	if err != nil {
		return types.NewErr("failed to get resource: %v", err)
	}
	v, err := k.store.Get(c.Decl, ns, str(args[2]), selfOf(req))
	switch {
	case err != nil:
		return types.NewErr("failed to get resource: %v", err)
	case v == nil:
		return types.NullValue
	}
	return v
}

// list is resource.List: the objects as the apiserver lists them, as
// {apiVersion, kind, metadata, items}, in one namespace or, for "", in
// all; a cluster-scoped resource listed in a namespace is the apiserver's
// NotFound, in its words.
func (k *library) list(args ...ref.Val) ref.Val {
	req, args := args[0], args[1:]
	ns := k.res.Namespace
	if ns == "" {
		ns, args = str(args[2]), append(args[:2:2], args[3:]...)
	}
	c, err := k.resource(args[0], args[1])
	if err == nil && k.store == nil {
		err = fmt.Errorf("%s: %w", refs.KindName(c.Decl.GVK), refs.ErrNoSource)
	}
	if err == nil && !c.Namespaced && ns != "" {
		// The apiserver's words, as Kyverno's dynamic client passes them
		// on (the Kyverno differential compares them).
		err = errors.New("the server could not find the requested resource")
	}
	if err != nil {
		return types.NewErr("failed to list resource: %v", err)
	}
	sel := labels.Everything()
	if len(args) == 3 {
		m, err := args[2].ConvertToNative(reflectStringMap)
		if err != nil {
			return types.NewErr("failed to list resource: labels: %v", err)
		}
		if s := m.(map[string]string); len(s) > 0 {
			sel = labels.SelectorFromSet(s)
		}
	}
	items, err := k.store.Select(c.Decl, ns, sel, selfOf(req))
	if err != nil {
		return types.NewErr("failed to list resource: %v", err)
	}
	gvk := c.Decl.GVK
	return types.NewRefValMap(types.DefaultTypeAdapter, map[ref.Val]ref.Val{
		types.String("apiVersion"): types.String(gvk.GroupVersion().String()),
		types.String("kind"):       types.String(gvk.Kind + "List"),
		types.String("metadata"):   types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{}),
		types.String("items"):      types.NewRefValList(types.DefaultTypeAdapter, items),
	})
}

var reflectStringMap = reflect.TypeOf(map[string]string(nil))

func str(v ref.Val) string {
	s, _ := v.(types.String)
	return string(s)
}

// selfOf is the object a CREATE request makes, which no lookup gives
// back (refs.Self); nothing for any other operation: the stored object is
// what the apiserver would answer.
func selfOf(req ref.Val) refs.Self {
	if str(member(req, "operation")) != "CREATE" {
		return refs.Self{}
	}
	kind := member(req, "kind")
	return refs.Self{GroupKind: schema.GroupKind{Group: str(member(kind, "group")), Kind: str(member(kind, "kind"))},
		Namespace: str(member(req, "namespace")), Name: str(member(req, "name"))}
}

// member is a map's or object's field, nil when it has none.
func member(v ref.Val, name string) ref.Val {
	m, ok := v.(traits.Mapper)
	if !ok {
		return nil
	}
	out, found := m.Find(types.String(name))
	if !found {
		return nil
	}
	return out
}
