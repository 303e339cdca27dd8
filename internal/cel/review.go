package cel

import (
	"fmt"

	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sadmission "k8s.io/apiserver/pkg/admission"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// review is what every policy evaluated on one Input reads, built once: the
// CEL values of object, oldObject, request and namespaceObject, made as
// the apiserver's validator makes them for each policy, and the values of
// the variables that read nothing but these (shared by expression text).
type review struct {
	object, oldObject, request, namespace any
	err                                   error
	shared                                map[string]*varResult
}

// values builds the input's review on first use.
func (in *Input) values() *review {
	if in.review != nil {
		return in.review
	}
	va := in.versioned()
	r := &review{shared: map[string]*varResult{}}
	in.review = r
	// As newActivation does (useSchemalessTypeRef), then converts each object
	// once: LazyObject keeps its CEL value.
	//lint:ignore SA1019 set as the apiserver's validator sets it (newActivation)
	va.VersionedObject.UseSchemalessTypeRef = true
	//lint:ignore SA1019 likewise
	va.VersionedOldObject.UseSchemalessTypeRef = true
	adapter := newValues()
	old, err := objectValue(adapter, &va.VersionedOldObject)
	if err != nil {
		r.err = fmt.Errorf("failed to prepare oldObject variable for evaluation: %w", err)
		return r
	}
	obj, err := objectValue(adapter, &va.VersionedObject)
	if err != nil {
		r.err = fmt.Errorf("failed to prepare object variable for evaluation: %w", err)
		return r
	}
	r.object, r.oldObject = obj, old
	request := plugincel.CreateAdmissionRequest(va.Attributes, metav1.GroupVersionResource(in.Resource), metav1.GroupVersionKind(va.VersionedKind))
	r.request = common.SchemalessTypedToVal(request)
	r.namespace = common.SchemalessTypedToVal(plugincel.CreateNamespaceObject(in.NamespaceObject))
	return r
}

// objectValue is the object's CEL value as LazyObject.CELValue makes it,
// unstructured objects' through adapter.
func objectValue(adapter *values, l *k8sadmission.LazyObject) (ref.Val, error) {
	if u, ok := l.Object().(*unstructured.Unstructured); ok {
		return adapter.NativeToValue(u.Object), nil
	}
	return l.CELValue()
}
