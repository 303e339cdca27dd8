// Package vap enforces Kubernetes ValidatingAdmissionPolicies as the
// kube-apiserver does: it matches a request against the policy's
// matchConstraints and each binding's matchResources with the apiserver's
// own matcher, evaluates the compiled policy, and turns decisions into a
// denial, warnings and audit annotations according to each binding's
// validationActions, with the apiserver's wording.
package vap

import (
	"context"
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Outcome is what a ValidatingAdmissionPolicy made of a request.
type Outcome struct {
	Matched bool
	// Denial is the apiserver's message for the first denied decision, with
	// its status reason and code; empty when nothing is denied.
	Denial string
	Reason string
	Code   int32
	// Warnings and AuditAnnotations as the apiserver would add them.
	Warnings         []string
	AuditAnnotations map[string]string
	// Failures are every failed validation, for reports.
	Failures []string
}

var objectInterfaces = k8sadmission.NewObjectInterfacesFromScheme(runtime.NewScheme())

// Evaluate runs one ValidatingAdmissionPolicy on a request.
// namespaces says what it knows of namespaces; nil when nothing (a namespace
// then has only the label kubernetes.io/metadata.name).
func Evaluate(ctx context.Context, n *policy.VAP, req *admission.Request, namespaces policy.Namespaces) (Outcome, error) {
	obj, err := cel.RuntimeObject(req.Object())
	if err != nil {
		return Outcome{}, err
	}
	old, err := cel.RuntimeObject(req.OldObject())
	if err != nil {
		return Outcome{}, err
	}
	attrs := k8sadmission.NewAttributesRecord(obj, old, req.Kind, req.Namespace, req.Name, req.Resource, req.SubResource,
		k8sadmission.Operation(req.Operation), nil, req.DryRun,
		&user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups})
	matcher := generic.NewPolicyMatcher(matching.NewMatcher(namespaces.Lister(), nil))
	def := n.Policy
	var out Outcome
	var denied []denial
	configError := func(err error, binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
		if *def.Spec.FailurePolicy == admissionregistrationv1.Ignore {
			return
		}
		what := "policy"
		if binding != nil {
			what = "binding"
		}
		denied = append(denied, denial{binding: binding, message: fmt.Sprintf("failed to configure %s: %v", what, err)})
	}
	matches, resource, kind, err := matcher.DefinitionMatches(attrs, objectInterfaces, validating.NewValidatingAdmissionPolicyAccessor(def))
	if err != nil {
		configError(err, nil)
		return out.finish(def, denied), nil
	}
	if !matches {
		return out, nil
	}
	out.Matched = true
	var ns *corev1.Namespace
	if req.Namespace != "" && !(req.Kind.Kind == "Namespace" && req.Kind.Group == "" && req.Kind.Version == "v1") {
		ns = namespaces.Lookup(req.Namespace)
	}
	va := &k8sadmission.VersionedAttributes{Attributes: attrs, VersionedKind: kind,
		VersionedObject: k8sadmission.NewLazyObject(obj), VersionedOldObject: k8sadmission.NewLazyObject(old)}
	audit := map[string]string{}
	var failures []failure
	for _, b := range n.Bindings {
		bm, err := matcher.BindingMatches(attrs, objectInterfaces, validating.NewValidatingAdmissionPolicyBindingAccessor(b))
		if err != nil {
			configError(err, b)
			continue
		}
		if !bm {
			continue
		}
		res := n.Validator.Validate(ctx, resource, va, ns)
		for i, d := range res.Decisions {
			if d.Action != validating.ActionDeny {
				continue
			}
			out.Failures = append(out.Failures, d.Message)
			for _, action := range b.Spec.ValidationActions {
				switch action {
				case admissionregistrationv1.Deny:
					denied = append(denied, denial{binding: b, message: d.Message, reason: string(d.Reason)})
				case admissionregistrationv1.Warn:
					out.Warnings = append(out.Warnings, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", def.Name, b.Name, d.Message))
				case admissionregistrationv1.Audit:
					failures = append(failures, failure{Message: d.Message, Policy: def.Name, Binding: b.Name, ExpressionIndex: i, ValidationActions: b.Spec.ValidationActions})
				}
			}
		}
		for _, a := range res.AuditAnnotations {
			switch a.Action {
			case validating.AuditAnnotationActionPublish:
				audit[def.Name+"/"+a.Key] = a.Value
			case validating.AuditAnnotationActionError:
				denied = append(denied, denial{binding: b, message: a.Error})
			}
		}
	}
	if len(failures) > 0 {
		v, _ := json.Marshal(failures)
		audit["validation.policy.admission.k8s.io/validation_failure"] = string(v)
	}
	if len(audit) > 0 {
		out.AuditAnnotations = audit
	}
	return out.finish(def, denied), nil
}

type denial struct {
	binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	message string
	reason  string
}

// failure is the apiserver's audit record of a failed validation.
type failure struct {
	Message           string                                     `json:"message"`
	Policy            string                                     `json:"policy"`
	Binding           string                                     `json:"binding"`
	ExpressionIndex   int                                        `json:"expressionIndex"`
	ValidationActions []admissionregistrationv1.ValidationAction `json:"validationActions"`
}

// finish words the first denial as the apiserver does.
func (o Outcome) finish(def *admissionregistrationv1.ValidatingAdmissionPolicy, denied []denial) Outcome {
	if len(denied) == 0 {
		return o
	}
	d := denied[0]
	if d.binding != nil {
		o.Denial = fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", def.Name, d.binding.Name, d.message)
	} else {
		o.Denial = fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", def.Name, d.message)
	}
	o.Reason = d.reason
	if o.Reason == "" {
		o.Reason = "Invalid"
	}
	o.Code = StatusCode(o.Reason)
	return o
}
