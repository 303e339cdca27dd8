// Package mutatingpolicy owns Kubernetes' MutatingAdmissionPolicies (MAPs)
// and their bindings, as the kube-apiserver has them. It reads them
// (v1, or v1beta1 converted), applies the apiserver's defaults, refuses
// what the apiserver would not store, and compiles them with the
// apiserver's own compiler. Mutate runs one on a request: it matches the
// policy's matchConstraints and each binding's matchResources with the
// apiserver's matcher, evaluates matchConditions, and applies the
// mutations in order, once per matching binding, with the apiserver's
// patchers. The policy's failurePolicy handles errors, worded as the
// apiserver words them.
package mutatingpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
)

// Mutation is what a MutatingAdmissionPolicy made of a request.
type Mutation struct {
	// Matched: a binding selected the request and the policy's
	// matchConditions were true for it; the mutations ran.
	Matched bool
	// NotApplied says why the policy did not apply, as the apiserver
	// decides it (admissionpolicy.NotMatched, admissionpolicy.NoBinding,
	// a binding not selecting the request, no param, a false match
	// condition); empty when it applied or when errors stopped it (Errors).
	NotApplied string
	// Object is the object after every mutation, as JSON; set when Changed.
	Object  []byte
	Changed bool
	// Denial is the apiserver's message for the first error the policy's
	// failurePolicy (Fail) turns into a refusal, with its reason and code.
	Denial string
	Reason string
	Code   int32
	// Errors are every error met, also those failurePolicy Ignore discards.
	Errors []string
}

var objectInterfaces = k8sadmission.NewObjectInterfacesFromScheme(runtime.NewScheme())

// Mutate runs one MutatingAdmissionPolicy on a request. namespaces says
// what is known of namespaces; nil when nothing (a namespace then has only
// the label kubernetes.io/metadata.name). Without them, a namespaceSelector
// of the policy or of a binding that reads other labels, and could select
// the request (its requirements on the name, rules and object selector
// match), is an error for the failurePolicy, never a silent "does not
// apply". On a binding's webhook path (policy.BindingWebhook) m has no
// selectors left: the apiserver applied them before calling.
//
// ext gives the policy its params, collected per binding as the apiserver
// collects them (every param a selector matches is an invocation of its
// own), and the authorizer.
func Mutate(ctx context.Context, m *Policy, req *admission.Request, namespaces namespaces.Func, ext external.Sources) (Mutation, error) {
	var out Mutation
	attrs, err := cel.Attributes(req)
	if err != nil {
		return out, err
	}
	if attrs.GetObject() == nil {
		out.NotApplied = "no object to mutate" // DELETE, or CONNECT without a body
		return out, nil
	}
	obj, old := attrs.GetObject(), attrs.GetOldObject()
	matcher := generic.NewPolicyMatcher(matching.NewMatcher(namespaces.Lister(), nil))
	def := m.Policy
	// Without cluster access a namespace is known only by its name.
	blind := namespaces == nil && req.Namespace != "" && !(req.Kind.Kind == "Namespace" && req.Kind.Group == "")
	matchDef, labels := def, false
	if blind {
		matchDef, labels = byName(def, def.Spec.MatchConstraints, func(c *admissionregistrationv1.MutatingAdmissionPolicy, mr *admissionregistrationv1.MatchResources) {
			c.Spec.MatchConstraints = mr
		})
	}
	var failed []failure
	matches, resource, kind, err := matcher.DefinitionMatches(attrs, objectInterfaces, mutating.NewMutatingAdmissionPolicyAccessor(matchDef))
	if err == nil && matches && labels {
		err = errors.New(errNamespaceLabels)
	}
	if err != nil {
		failed = append(failed, failure{message: "failed to configure policy: " + err.Error()})
		return out.finish(def, failed), nil
	}
	if !matches {
		out.NotApplied = admissionpolicy.PolicyMiss(matcher, attrs, matchDef.Spec.MatchConstraints)
		return out, nil
	}
	if err := ext.ParamKind(def.Spec.ParamKind); err != nil {
		failed = append(failed, failure{message: "failed to configure policy: " + err.Error()})
		return out.finish(def, failed), nil
	}
	authz := ext.NewAuthorizer()
	var ns *corev1.Namespace
	if req.Namespace != "" && !(req.Kind.Kind == "Namespace" && req.Kind.Group == "" && req.Kind.Version == "v1") {
		ns = namespaces.Lookup(req.Namespace)
	}
	va := &k8sadmission.VersionedAttributes{Attributes: attrs, VersionedKind: kind,
		VersionedObject: k8sadmission.NewLazyObject(obj), VersionedOldObject: k8sadmission.NewLazyObject(old)}
	var why []string
	notApplied := func(w string) {
		if !slices.Contains(why, w) {
			why = append(why, w)
		}
	}
	if len(m.Bindings) == 0 {
		notApplied(admissionpolicy.NoBinding)
	}
	for _, b := range m.Bindings {
		matchBinding, labels := b, false
		if blind {
			matchBinding, labels = byName(b, b.Spec.MatchResources, func(c *admissionregistrationv1.MutatingAdmissionPolicyBinding, mr *admissionregistrationv1.MatchResources) {
				c.Spec.MatchResources = mr
			})
		}
		bm, err := matcher.BindingMatches(attrs, objectInterfaces, mutating.NewMutatingAdmissionPolicyBindingAccessor(matchBinding))
		if err == nil && bm && labels {
			err = errors.New(errNamespaceLabels)
		}
		if err != nil {
			failed = append(failed, failure{binding: b, message: "failed to configure binding: " + err.Error()})
			continue
		}
		if !bm {
			notApplied(admissionpolicy.BindingMiss(matcher, attrs, b.Name, b.Spec.MatchResources))
			continue
		}
		params, err := ext.Collect(def.Spec.ParamKind, b.Spec.ParamRef, req.Namespace)
		if err != nil {
			failed = append(failed, failure{binding: b, message: "failed to configure binding: " + err.Error()})
			continue
		}
		if len(params) == 0 {
			notApplied(fmt.Sprintf("binding %s: no param found (parameterNotFoundAction Allow)", b.Name))
		}
		for _, param := range params {
			ok, unmet, err := m.Mutator.MatchConditions(ctx, va, param, authz)
			if err != nil {
				failed = append(failed, failure{binding: b, message: err.Error(), reason: metav1.StatusReasonInvalid})
				continue
			}
			if !ok {
				notApplied(admissionpolicy.MatchConditionsNotMet(unmet))
				continue
			}
			out.Matched = true
			for _, err := range m.Mutator.Mutate(ctx, resource, va, ns, param, authz) {
				failed = append(failed, failure{binding: b, message: err.Error(), reason: metav1.StatusReasonInvalid})
			}
		}
	}
	after := va.VersionedObject.Object()
	if !apiequality.Semantic.DeepEqual(obj, after) {
		if out.Object, err = json.Marshal(after); err != nil {
			return out, fmt.Errorf("encode mutated object: %w", err)
		}
		out.Changed = true
	}
	if !out.Matched && len(failed) == 0 {
		out.NotApplied = strings.Join(why, "; ")
	}
	return out.finish(def, failed), nil
}

// failure is one error of the policy or of a binding.
type failure struct {
	binding *admissionregistrationv1.MutatingAdmissionPolicyBinding
	message string
	reason  metav1.StatusReason
}

// finish applies the failure policy: with Fail, the first error refuses
// the request as the apiserver words it (a 403 whose reason is the
// error's); with Ignore, errors are only reported.
func (o Mutation) finish(def *admissionregistrationv1.MutatingAdmissionPolicy, failed []failure) Mutation {
	for _, f := range failed {
		o.Errors = append(o.Errors, f.message)
	}
	if len(failed) == 0 || *def.Spec.FailurePolicy == admissionregistrationv1.Ignore {
		return o
	}
	f := failed[0]
	if f.binding != nil {
		o.Denial = fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", def.Name, f.binding.Name, f.message)
	} else {
		o.Denial = fmt.Sprintf("policy %q denied request: %s", def.Name, f.message)
	}
	o.Reason = string(f.reason)
	if o.Reason == "" {
		o.Reason = string(metav1.StatusReasonForbidden)
	}
	o.Code = http.StatusForbidden
	o.Object, o.Changed = nil, false
	return o
}
