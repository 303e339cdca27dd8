package cel

import (
	"fmt"
	"reflect"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"

	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// referenceType is the CEL type of references.<name>.
var referenceType = celgo.OpaqueType("tollgate.dev.Reference")

// referenceOptions declare the references variable and the lookups of a
// reference, for policies that declare references:
//
//	references.<name>.byKey(index, key)   objects whose index has key
//	references.<name>.inNamespace(ns)     objects in a namespace
//	references.<name>.get(ns, name)       the object, or null
//	references.<name>.objects()           every object (a scan)
//
// Each list is sorted by namespace and name, without the object under
// review (refs.Self).
func referenceOptions() environment.VersionedOptions {
	list := celgo.ListType(celgo.DynType)
	return environment.VersionedOptions{IntroducedVersion: version.MajorMinor(1, 0), EnvOptions: []celgo.EnvOption{
		celgo.Variable(refs.Variable, celgo.MapType(celgo.StringType, referenceType)),
		celgo.Function("byKey", celgo.MemberOverload("tollgate_reference_byKey_string_dyn",
			[]*celgo.Type{referenceType, celgo.StringType, celgo.DynType}, list, celgo.FunctionBinding(byKey))),
		celgo.Function("inNamespace", celgo.MemberOverload("tollgate_reference_inNamespace_string",
			[]*celgo.Type{referenceType, celgo.StringType}, list, celgo.BinaryBinding(inNamespace))),
		celgo.Function("get", celgo.MemberOverload("tollgate_reference_get_string_string",
			[]*celgo.Type{referenceType, celgo.StringType, celgo.StringType}, celgo.DynType, celgo.FunctionBinding(get))),
		celgo.Function("objects", celgo.MemberOverload("tollgate_reference_objects",
			[]*celgo.Type{referenceType}, list, celgo.UnaryBinding(objects))),
	}}
}

// referenceVal is references.<name> in one evaluation: the declaration,
// the store it is read from (nil: none) and the object under review.
type referenceVal struct {
	c     *refs.Compiled
	store *refs.Store
	self  refs.Self
}

func (r *referenceVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("reference %s cannot be converted to %v", r.c.Name, t)
}

func (r *referenceVal) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return referenceType
	}
	return types.NewErr("reference %s cannot be converted to %s", r.c.Name, t.TypeName())
}

func (r *referenceVal) Equal(o ref.Val) ref.Val { return types.Bool(o == ref.Val(r)) }

func (r *referenceVal) Type() ref.Type { return referenceType }

func (r *referenceVal) Value() any { return r }

// referencesValue is the references variable of a program's evaluation.
func referencesValue(decls []*refs.Compiled, store *refs.Store, self refs.Self) ref.Val {
	m := make(map[ref.Val]ref.Val, len(decls))
	for _, c := range decls {
		m[types.String(c.Name)] = &referenceVal{c: c, store: store, self: self}
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, m)
}

func receiver(v ref.Val) (*referenceVal, ref.Val) {
	r, ok := v.(*referenceVal)
	if !ok {
		return nil, types.MaybeNoSuchOverloadErr(v)
	}
	if r.store == nil {
		return nil, types.NewErr("reference %s: %s: %v", r.c.Name, refs.KindName(r.c.GVK), refs.ErrNoSource)
	}
	return r, nil
}

func listOf(vals []ref.Val, err error) ref.Val {
	if err != nil {
		return types.NewErr("%v", err)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals)
}

func byKey(args ...ref.Val) ref.Val {
	if len(args) != 3 {
		return types.NoSuchOverloadErr()
	}
	r, bad := receiver(args[0])
	if bad != nil {
		return bad
	}
	index, ok := args[1].(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[1])
	}
	key, err := refs.Key(args[2])
	if err != nil {
		return types.NewErr("reference %s: byKey(%q): %v", r.c.Name, string(index), err)
	}
	return listOf(r.store.ByKey(r.c, string(index), key, r.self))
}

func inNamespace(recv, ns ref.Val) ref.Val {
	r, bad := receiver(recv)
	if bad != nil {
		return bad
	}
	s, ok := ns.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(ns)
	}
	return listOf(r.store.InNamespace(r.c, string(s), r.self))
}

func get(args ...ref.Val) ref.Val {
	if len(args) != 3 {
		return types.NoSuchOverloadErr()
	}
	r, bad := receiver(args[0])
	if bad != nil {
		return bad
	}
	ns, ok1 := args[1].(types.String)
	name, ok2 := args[2].(types.String)
	if !ok1 || !ok2 {
		return types.NoSuchOverloadErr()
	}
	v, err := r.store.Get(r.c, string(ns), string(name), r.self)
	switch {
	case err != nil:
		return types.NewErr("%v", err)
	case v == nil:
		return types.NullValue
	}
	return v
}

func objects(recv ref.Val) ref.Val {
	r, bad := receiver(recv)
	if bad != nil {
		return bad
	}
	return listOf(r.store.All(r.c, r.self))
}
