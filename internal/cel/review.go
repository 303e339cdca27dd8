package cel

import (
	"fmt"

	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/cel/common"

	"github.com/tollgate-dev/tollgate/internal/cel/lazy"
	refs "github.com/tollgate-dev/tollgate/internal/references"
)

// review is what every policy evaluated on one Input reads, built once: the
// CEL values of object, oldObject, request and namespaceObject, made as
// the apiserver's validator makes them for each policy, and the values of
// the variables that read nothing but these (shared by expression text).
type review struct {
	object, oldObject, request, namespace any
	err                                   error
	shared                                map[string]*varResult
	// refStore and self are what references.<name> reads: the input's
	// store, and the object under review, whose stored copy lookups skip.
	refStore *refs.Store
	self     refs.Self
}

// values builds the input's review on first use. An object the input
// carries as JSON is read from it as the expressions reach its members
// (package lazy); only the apiserver's own evaluators (match conditions, the
// tracked validator) and Pod templates need it decoded (Objects).
func (in *Input) values() *review {
	if in.review != nil {
		return in.review
	}
	r := &review{shared: map[string]*varResult{}, refStore: in.References,
		self: refs.Self{GroupKind: in.Kind.GroupKind(), Namespace: in.Namespace, Name: in.Name}}
	in.review = r
	if err := in.Check(); err != nil {
		r.err = fmt.Errorf("failed to prepare object variables for evaluation: %w", err)
		return r
	}
	adapter := lazy.NewValues()
	object, oldObject := in.Object, in.OldObject
	if in.deep { // read decoded (Check decoded them)
		object, oldObject, _ = in.Objects()
	}
	old, err := objectValue(adapter, in.docs[1], oldObject)
	if err != nil {
		r.err = fmt.Errorf("failed to prepare oldObject variable for evaluation: %w", err)
		return r
	}
	obj, err := objectValue(adapter, in.docs[0], object)
	if err != nil {
		r.err = fmt.Errorf("failed to prepare object variable for evaluation: %w", err)
		return r
	}
	r.object, r.oldObject = obj, old
	// The request variable reads no object (CreateAdmissionRequest leaves
	// them out): attributes without them, so as not to decode them.
	request := plugincel.CreateAdmissionRequest(in.attributes(nil, nil), metav1.GroupVersionResource(in.Resource), metav1.GroupVersionKind(in.Kind))
	r.request = common.SchemalessTypedToVal(request)
	r.namespace = common.SchemalessTypedToVal(plugincel.CreateNamespaceObject(in.NamespaceObject))
	return r
}

// objectValue is an object's CEL value: read from doc when there are
// bytes, else made as LazyObject.CELValue makes it for the apiserver's
// validator (newActivation sets useSchemalessTypeRef), unstructured
// objects' through adapter.
func objectValue(adapter *lazy.Values, doc *lazy.Document, obj runtime.Object) (ref.Val, error) {
	if doc != nil {
		return adapter.Object(doc), nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return adapter.NativeToValue(u.Object), nil
	}
	l := k8sadmission.NewLazyObject(obj)
	//lint:ignore SA1019 set as the apiserver's validator sets it (newActivation)
	l.UseSchemalessTypeRef = true
	return l.CELValue()
}
