package engine

import (
	"errors"

	"github.com/valyala/fastjson"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// template is a Pod controller's Pod template, seen as the Pod it makes.
type template struct {
	labels   map[string]string
	celInput *cel.Input
}

var errNoTemplate = errors.New("the object has no pod template")

var (
	podKind     = corev1.SchemeGroupVersion.WithKind("Pod")
	podResource = corev1.SchemeGroupVersion.WithResource("pods")
)

// podTemplate turns a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
// ReplicationController (spec.template) or CronJob (spec.jobTemplate.spec.template) into a Pod
// with the template's metadata and spec, named after the controller
// (podOf). The Pods are built from the review's bytes (podJSON), so that
// the policies read them as they read a review's objects, without decoding
// the controller; decoded only where the bytes cannot give podOf's Pod.
func (in *input) podTemplate(req *admission.Request, ns *corev1.Namespace) (*template, error) {
	if in.tmpl != nil {
		return in.tmpl, nil
	}
	base, err := in.cel(req, ns)
	if err != nil {
		return nil, err
	}
	t, err := templateFromJSON(base)
	if t == nil && err == nil {
		t, err = templateDecoded(base)
	}
	if err != nil {
		return nil, err
	}
	in.tmpl = t
	return t, nil
}

// templateDecoded is the template of base's objects decoded (podOf).
func templateDecoded(base *cel.Input) (*template, error) {
	obj, old, err := base.Objects()
	if err != nil {
		return nil, err
	}
	pod, err := podOf(obj)
	if err != nil {
		return nil, err
	}
	oldPod, _ := podOf(old)
	var labels map[string]string
	if pod != nil {
		labels = pod.(*unstructured.Unstructured).GetLabels()
	}
	return &template{labels: labels, celInput: base.As(pod, oldPod, podKind, podResource)}, nil
}

// templateFromJSON is the template of base's objects built from their
// bytes (podJSON), nil when either cannot be.
func templateFromJSON(base *cel.Input) (*template, error) {
	if base.Object != nil || base.OldObject != nil {
		return nil, nil // objects given, not bytes
	}
	d, oldD := base.Documents()
	pod, labels, exact, err := podJSON(base.ObjectJSON, d)
	if !exact {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	oldPod, _, exact, oldErr := podJSON(base.OldObjectJSON, oldD)
	if !exact {
		return nil, nil
	}
	if oldErr != nil {
		oldPod = nil // as podOf's error on the old object is ignored
	}
	ci := base.AsJSON(pod, oldPod, podKind, podResource)
	if err := ci.Check(); err != nil {
		return nil, err
	}
	return &template{labels: labels, celInput: ci}, nil
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

// podJSON is podOf on a controller's JSON (validated, an object; nil for
// none) and its index, reading only the members on its way: the Pod's
// JSON, with the template's metadata members but name and namespace, then
// the controller's name and namespace (strings, else ""), and the
// template's spec, verbatim; and the template's labels as podOf's Pod's
// GetLabels. A repeated name counts by its last value, as decoding keeps
// it. exact is false where the Pod podOf builds has no JSON of its own:
// the template's spec is missing or no object (podOf gives it a nil map).
func podJSON(obj []byte, in jsonscan.Indexed) (pod []byte, labels map[string]string, exact bool, err error) {
	if obj == nil {
		return nil, nil, true, nil
	}
	root, ok := in.Span(obj)
	if !ok {
		in = jsonscan.IndexedOf(obj, jsonscan.NewIndex(obj, ""))
		root, _ = in.Span(obj)
	}
	top := last(in, root, "kind", "spec", "metadata")
	ctrl, tmpl := top[2], top[1]
	path := []string{"template"}
	if k := in.Bytes(top[0]); jsonscan.TypeOf(k) == fastjson.TypeString && jsonscan.Unescape(k) == "CronJob" {
		path = []string{"jobTemplate", "spec", "template"}
	}
	for _, key := range path {
		tmpl = last(in, tmpl, key)[0]
	}
	if jsonscan.TypeOf(in.Bytes(tmpl)) != fastjson.TypeObject {
		return nil, nil, true, errNoTemplate
	}
	t := last(in, tmpl, "metadata", "spec")
	meta, spec := t[0], in.Bytes(t[1])
	if jsonscan.TypeOf(spec) != fastjson.TypeObject {
		return nil, nil, false, nil
	}
	b := make([]byte, 0, meta.End-meta.Start+len(spec)+128)
	b = append(b, `{"apiVersion":"v1","kind":"Pod","metadata":{`...)
	var labelsAt jsonscan.Span
	for k, v := range in.Pairs(meta) {
		if jsonscan.KeyIs(k, "labels") {
			labelsAt = v
		}
		if !jsonscan.KeyIs(k, "name") && !jsonscan.KeyIs(k, "namespace") {
			b = append(append(append(append(b, k...), ':'), in.Bytes(v)...), ',')
		}
	}
	names := last(in, ctrl, "name", "namespace")
	b = append(append(b, `"name":`...), stringOr(in.Bytes(names[0]))...)
	b = append(append(b, `,"namespace":`...), stringOr(in.Bytes(names[1]))...)
	b = append(append(append(b, `},"spec":`...), spec...), '}')
	if l := in.Bytes(labelsAt); jsonscan.TypeOf(l) == fastjson.TypeObject {
		u, err := cel.ObjectFromJSON(l)
		if err != nil {
			return nil, nil, true, err // not reached: part of a checked object
		}
		labels, _, _ = unstructured.NestedStringMap(map[string]any{"labels": u.Object}, "labels")
	}
	return b, labels, true, nil
}

// last are the spans of the last members of the object at s of in named
// keys (compared unescaped), the zero Span for those it lacks or when s is
// absent or no object.
func last(in jsonscan.Indexed, s jsonscan.Span, keys ...string) []jsonscan.Span {
	out := make([]jsonscan.Span, len(keys))
	for k, v := range in.Pairs(s) {
		for i, key := range keys {
			if jsonscan.KeyIs(k, key) {
				out[i] = v
			}
		}
	}
	return out
}

// stringOr is a JSON string as it is, or "" for anything else.
func stringOr(v []byte) []byte {
	if jsonscan.TypeOf(v) == fastjson.TypeString {
		return v
	}
	return []byte(`""`)
}
