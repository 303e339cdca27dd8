package engine

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/cel"
)

// input is what validation reads of a request: the metadata always, the
// whole objects only when a CEL policy needs them, decoded once.
type input struct {
	meta              *admission.ObjectMeta
	labels, oldLabels map[string]string

	obj, oldObj runtime.Object
	decoded     bool
	decodeErr   error
	celInput    *cel.Input // shared by the request's policies
	tmpl        *template  // the Pod template view, likewise
}

func newInput(req *admission.Request) (*input, error) {
	m, old, err := metaOf(req)
	if err != nil {
		return nil, err
	}
	in := &input{meta: m, labels: m.Labels}
	if len(req.Object()) > 0 && old != nil {
		in.oldLabels = old.Labels
		if in.oldLabels == nil {
			in.oldLabels = map[string]string{}
		}
	}
	return in, nil
}

func (in *input) decode(req *admission.Request) error {
	if in.decoded {
		return in.decodeErr
	}
	in.decoded = true
	in.obj, in.decodeErr = cel.RuntimeObject(req.Object())
	if in.decodeErr == nil {
		in.oldObj, in.decodeErr = cel.RuntimeObject(req.OldObject())
	}
	return in.decodeErr
}

func (in *input) cel(req *admission.Request, ns *corev1.Namespace) (*cel.Input, error) {
	if in.celInput != nil {
		return in.celInput, nil
	}
	if err := in.decode(req); err != nil {
		return nil, err
	}
	ci, err := in.celFor(req, in.obj, ns)
	if ci != nil {
		ci.ObjectJSON, ci.OldObjectJSON = req.Object(), req.OldObject()
	}
	in.celInput = ci
	return ci, err
}

// celFor is the CEL input of req with obj as the object (without the
// review's bytes: obj need not be the review's object).
func (in *input) celFor(req *admission.Request, obj runtime.Object, ns *corev1.Namespace) (*cel.Input, error) {
	if !in.decoded {
		in.decoded = true
		in.oldObj, in.decodeErr = cel.RuntimeObject(req.OldObject())
	}
	if in.decodeErr != nil {
		return nil, in.decodeErr
	}
	return &cel.Input{
		Object: obj, OldObject: in.oldObj,
		Kind: req.Kind, Resource: req.Resource, SubResource: req.SubResource,
		Name: req.Name, Namespace: req.Namespace, Operation: string(req.Operation), DryRun: req.DryRun,
		User:            &user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups},
		NamespaceObject: ns,
	}, nil
}

// template is a Pod controller's Pod template, seen as the Pod it makes.
type template struct {
	labels   map[string]string
	celInput *cel.Input
}

var errNoTemplate = errors.New("the object has no pod template")

// podTemplate turns a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
// ReplicationController (spec.template) or CronJob (spec.jobTemplate.spec.template) into a Pod
// with the template's metadata and spec, named after the controller.
func (in *input) podTemplate(req *admission.Request, ns *corev1.Namespace) (*template, error) {
	if in.tmpl != nil {
		return in.tmpl, nil
	}
	base, err := in.cel(req, ns)
	if err != nil {
		return nil, err
	}
	pod, err := podOf(in.obj)
	if err != nil {
		return nil, err
	}
	oldPod, _ := podOf(in.oldObj)
	ci := base.As(pod, oldPod, corev1.SchemeGroupVersion.WithKind("Pod"), corev1.SchemeGroupVersion.WithResource("pods"))
	var labels map[string]string
	if pod != nil {
		labels = pod.(*unstructured.Unstructured).GetLabels()
	}
	in.tmpl = &template{labels: labels, celInput: ci}
	return in.tmpl, nil
}

func podOf(obj runtime.Object) (runtime.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u == nil {
		return nil, nil
	}
	path := []string{"spec", "template"}
	if u.GetKind() == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template"}
	}
	tmpl, found, err := unstructured.NestedMap(u.Object, path...)
	if err != nil || !found {
		return nil, errNoTemplate
	}
	meta, _, _ := unstructured.NestedMap(tmpl, "metadata")
	if meta == nil {
		meta = map[string]any{}
	}
	meta["name"], meta["namespace"] = u.GetName(), u.GetNamespace()
	spec, _, _ := unstructured.NestedMap(tmpl, "spec")
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}}, nil
}
