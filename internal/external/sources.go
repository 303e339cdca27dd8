// Package external holds what Kubernetes admission policies read beyond
// the request: the params a binding refers to and the authorizer bound to
// the CEL variable authorizer, for ValidatingAdmissionPolicies and
// MutatingAdmissionPolicies alike.
package external

import (
	"errors"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission/plugin/authorizer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	k8sauthorizer "k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tollgate-dev/tollgate/internal/authz"
	"github.com/tollgate-dev/tollgate/internal/params"
	"github.com/tollgate-dev/tollgate/internal/references"
)

// Sources is what a policy reads beyond the request: its params, the
// authorizer bound to the CEL variable authorizer, and the objects
// tollgate policies reference. Any may be nil; a
// policy that needs what is missing gets an error naming it, never a
// guess.
type Sources struct {
	Params     *params.Store
	Authorizer k8sauthorizer.UnconditionalAuthorizer
	// References holds the other objects tollgate policies declare under
	// spec.references; nil for none (a lookup then fails naming the kind).
	References *references.Store
}

// errNoParams is the configuration error of a parameterized policy when
// tollgate was given nowhere to read params from.
var errNoParams = errors.New("tollgate has no params source: give cluster access (--kubeconfig) or the param objects (--params)")

// ParamKind is nil when a policy's param kind can be read (or it has
// none), else the configuration error the apiserver would give.
func (e Sources) ParamKind(k *admissionregistrationv1.ParamKind) error {
	if k == nil {
		return nil
	}
	if e.Params == nil {
		return errNoParams
	}
	return e.Params.Kind(k)
}

// Collect resolves a binding's paramRef as the apiserver does.
func (e Sources) Collect(k *admissionregistrationv1.ParamKind, ref *admissionregistrationv1.ParamRef, namespace string) ([]runtime.Object, error) {
	if e.Params == nil {
		if k != nil && ref != nil {
			return nil, errNoParams
		}
		return generic.CollectParams(k, nil, nil, ref, namespace, nil, nil)
	}
	return e.Params.Collect(k, ref, namespace)
}

// NewAuthorizer is the request's authorizer, caching decisions for the
// request's lifetime as the apiserver's dispatcher does; without one,
// every check errors naming what tollgate needs.
func (e Sources) NewAuthorizer() k8sauthorizer.UnconditionalAuthorizer {
	a := e.Authorizer
	if a == nil {
		a = authz.None{}
	}
	return authorizer.NewCachingAuthorizer(a)
}
