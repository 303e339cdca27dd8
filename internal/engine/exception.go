package engine

import (
	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/exception"
)

// exemption is the PolicyException that lifts policy p for the request's
// object, nil if none does. It is the one place the engine asks, for every
// kind of policy, so every command applies exceptions alike.
func (e *Engine) exemption(p string, req *admission.Request, labels map[string]string) *exception.Exception {
	if !e.exceptions.Names(p) {
		return nil
	}
	name := req.Name
	if name == "" {
		if m, _, err := metaOf(req); err == nil {
			name = m.Name
		}
	}
	return e.exceptions.Find(p, exception.Object{Kind: req.Kind.GroupKind(), Namespace: req.Namespace, Name: name, Labels: labels})
}

// exempted is the skip result of a policy an exception lifts.
func exempted(p string, ex *exception.Exception) Result {
	return Result{Policy: p, Outcome: Skip, Message: ex.Message(), Exception: ex.Name()}
}

// objectLabels are the labels of the request's object (oldObject's on
// DELETE), nil when it has none or cannot be read.
func objectLabels(req *admission.Request) map[string]string {
	m, _, err := metaOf(req)
	if err != nil {
		return nil
	}
	return m.Labels
}
