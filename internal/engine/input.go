package engine

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/cel"
)

// input is what validation reads of a request: the metadata always; for
// CEL policies, the objects' JSON, checked once, which the evaluation reads
// only as far as the expressions go (cel.Input); the whole objects decoded
// only for what needs them (Pod templates, the apiserver's evaluators).
type input struct {
	meta              *admission.ObjectMeta
	labels, oldLabels map[string]string

	celInput *cel.Input // shared by the request's policies
	celErr   error      // why the objects cannot be read, once checked
	tmpl     *template  // the Pod template view, likewise
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

// cel is the CEL input of the request, its objects as the review's JSON;
// an error when they cannot be read (Check), as decoding them would fail.
func (in *input) cel(req *admission.Request, ns *corev1.Namespace) (*cel.Input, error) {
	if in.celInput != nil || in.celErr != nil {
		return in.celInput, in.celErr
	}
	ci := cel.NewInput(req, ns)
	ci.ObjectJSON, ci.OldObjectJSON, ci.Indexed = req.Object(), req.OldObject(), req.Indexed()
	if in.celErr = ci.Check(); in.celErr != nil {
		return nil, in.celErr
	}
	in.celInput = ci
	return ci, nil
}

// celFor is the CEL input of req with obj as the object (not the review's:
// a mutated one), the old object decoded from the review.
func (in *input) celFor(req *admission.Request, obj runtime.Object, ns *corev1.Namespace) (*cel.Input, error) {
	old, err := cel.RuntimeObject(req.OldObject())
	if err != nil {
		return nil, err
	}
	ci := cel.NewInput(req, ns)
	ci.Object, ci.OldObject = obj, old
	return ci, nil
}
