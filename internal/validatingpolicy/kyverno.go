package validatingpolicy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/kyverno"
)

// recordKyverno acts on a Kyverno policy's validation result as Kyverno
// does (pkg/cel/policies/vpol/compiler/policy.go and
// pkg/webhooks/resource/vpol/handler.go): the validations run in order and
// the first that is false or errs decides alone; an error is the policy's
// error whatever its failurePolicy (which Kyverno applies to match
// conditions and to its webhook only); Deny refuses with "Policy <name>
// failed: <message>" ("error: error: <error>" for an error), Warn warns in
// the same words, Audit reports.
func (e *evaluation) recordKyverno(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, res validating.ValidateResult) {
	for i, d := range res.Decisions {
		if d.Action != validating.ActionDeny && d.Evaluation != validating.EvalError {
			continue
		}
		message := d.Message
		if d.Evaluation != validating.EvalError && i < len(e.def.Spec.Validations) {
			message = e.kyvernoMessage(i)
		}
		msg := fmt.Sprintf("Policy %s failed: %s", e.def.Name, message)
		if d.Evaluation == validating.EvalError {
			msg = fmt.Sprintf("Policy %s error: error: %s", e.def.Name, kyvernoCause(e.def, i, d.Message))
		}
		e.out.Failures = append(e.out.Failures, message)
		for _, action := range b.Spec.ValidationActions {
			switch action {
			case admissionregistrationv1.Deny:
				e.denied = append(e.denied, denial{binding: b, message: msg, kyverno: true})
			case admissionregistrationv1.Warn:
				e.out.Warnings = append(e.out.Warnings, msg)
			case admissionregistrationv1.Audit:
				e.failures = append(e.failures, failure{Message: message, Policy: e.def.Name, Binding: b.Name, ExpressionIndex: i, ValidationActions: b.Spec.ValidationActions})
			}
		}
		break // the first failing validation only
	}
	for _, a := range res.AuditAnnotations {
		if a.Action == validating.AuditAnnotationActionPublish {
			e.audit[e.def.Name+"/"+a.Key] = a.Value
		}
	}
}

// kyvernoMessage is the message of failing validation i as Kyverno words
// it: its message as written (the apiserver's evaluator trims it), or,
// with a messageExpression, what kyverno.Message makes of it (Kyverno
// then ignores the message).
func (e *evaluation) kyvernoMessage(i int) string {
	if e.def.Spec.Validations[i].MessageExpression == "" || e.messages == nil {
		return e.def.Spec.Validations[i].Message
	}
	return e.messages(i)
}

// messages words failing validation i of a Kyverno policy that has a
// messageExpression, for this request, with the exceptions variable as the
// policy's param (kyverno.Message).
func (in kyvernoInput) messages(ctx context.Context, n *Policy, params runtime.Object) func(i int) string {
	return func(i int) string {
		m := n.KyvernoCompiled.Messages
		if i >= len(m) || m[i] == nil {
			return kyverno.DefaultMessage(i)
		}
		return kyverno.Message(m[i].Validate(ctx, in.resource, in.va, params, in.ns, in.authz), i)
	}
}

// kyvernoCause is the error of validation i as Kyverno words it, bare: the
// apiserver's evaluator says "expression '<expression>' resulted in error:
// <cause>" (k8s.io/apiserver/pkg/admission/plugin/cel/activation.go), and
// wraps the error of a variable in its name (kyverno.VariableCause).
func kyvernoCause(def *admissionregistrationv1.ValidatingAdmissionPolicy, i int, message string) string {
	if i < len(def.Spec.Validations) {
		if cause, ok := strings.CutPrefix(message, "expression '"+def.Spec.Validations[i].Expression+"' resulted in error: "); ok {
			return kyverno.VariableCause(cause)
		}
	}
	return message
}

// kyvernoExceptions applies a Kyverno policy's PolicyExceptions in force at
// now as Kyverno does (pkg/cel/policies/vpol/compiler/policy.go), after its
// matchConstraints and before its matchConditions: an exception applies
// when all its matchConditions hold (read with the request's
// namespaceObject); one without images and allowedValues lifts the policy
// whole (whole is true, and the outcome names every exception that
// applied); the others give the policy's exceptions variable (params here)
// their images and allowedValues. A condition's error is the policy's error
// (under failurePolicy Fail; Ignore: the exception does not apply), unless
// an exception already lifted it whole.
func (e *evaluation) kyvernoExceptions(ctx context.Context, n *Policy, in kyvernoInput) (params runtime.Object, whole bool) {
	if len(n.Kyverno.Exceptions) == 0 {
		return noExceptions, false
	}
	images, values := []any{}, []any{}
	var applied []*kyverno.Exception
	for _, x := range n.Kyverno.Exceptions {
		if k := n.Kyverno; k.Kind == kyverno.NamespacedValidatingPolicy && in.va.GetNamespace() != k.Namespace {
			break // Kyverno leaves the policy out before it reads exceptions; its namespace condition does here
		}
		if !x.Active(in.now) {
			continue
		}
		if c := x.Conditions; c != nil && !in.nsKnown && c.UsesNamespaceObject {
			if !whole {
				e.undecided(fmt.Errorf("namespaceObject: namespace %q unknown: %s", in.va.GetNamespace(), needNamespace), n.Bindings[0])
				return nil, false
			}
			continue
		}
		holds, err := e.conditionsHold(ctx, x, in)
		if err != nil {
			if whole {
				continue // a broken later exception does not undo a whole exemption
			}
			e.kyvernoError(n, err)
			return nil, false
		}
		if !holds {
			continue
		}
		applied = append(applied, x)
		if x.Kyverno.Whole() {
			whole = true
		} else if !whole {
			for _, i := range x.Kyverno.Images {
				images = append(images, i)
			}
			for _, v := range x.Kyverno.AllowedValues {
				values = append(values, v)
			}
		}
	}
	if whole {
		e.out.KyvernoResult = kyvernoReportResult(applied)
		for _, x := range applied {
			e.out.KyvernoExceptions = append(e.out.KyvernoExceptions, x.Kyverno.Key(x.Name()))
		}
		return nil, true
	}
	return &unstructured.Unstructured{Object: map[string]any{"allowedImages": images, "allowedValues": values}}, false
}

// noExceptions is the exceptions variable when no exception names the
// policy: empty lists. CEL only reads it.
var noExceptions runtime.Object = &unstructured.Unstructured{Object: map[string]any{"allowedImages": []any{}, "allowedValues": []any{}}}

// kyvernoInput is what an exception's matchConditions read.
type kyvernoInput struct {
	resource schema.GroupVersionResource
	va       *k8sadmission.VersionedAttributes
	ns       *corev1.Namespace
	nsKnown  bool
	authz    authorizer.UnconditionalAuthorizer
	now      time.Time
}

// conditionsHold evaluates an exception's matchConditions as Kyverno's
// match does: any false is false; else any error is an error (false under
// failurePolicy Ignore); else true.
func (e *evaluation) conditionsHold(ctx context.Context, x *kyverno.Exception, in kyvernoInput) (bool, error) {
	if x.Conditions == nil {
		return true, nil
	}
	exprs := make([]string, len(x.Kyverno.MatchConditions))
	for i, c := range x.Kyverno.MatchConditions {
		exprs[i] = c.Expression
	}
	unmet, errs := decideConditions(x.Conditions.Validate(ctx, in.resource, in.va, nil, in.ns, in.authz), exprs)
	switch {
	case unmet >= 0:
		return false, nil
	case len(errs) == 0:
		return true, nil
	case *e.def.Spec.FailurePolicy == admissionregistrationv1.Ignore:
		return false, nil
	}
	return false, errors.New(strings.Join(errs, "; "))
}

// kyvernoConditionsMet evaluates a Kyverno policy's matchConditions as
// Kyverno does (after its exceptions, with namespaceObject and the
// exceptions variable): false when one is false or, under failurePolicy
// Ignore, errs, recorded as not applying; an error under Fail is the
// policy's error.
func (e *evaluation) kyvernoConditionsMet(ctx context.Context, n *Policy, in kyvernoInput, params runtime.Object) bool {
	c := n.KyvernoCompiled.Conditions
	if c == nil {
		return true
	}
	if !in.nsKnown && c.UsesNamespaceObject {
		e.undecided(fmt.Errorf("namespaceObject: namespace %q unknown: %s", in.va.GetNamespace(), needNamespace), n.Bindings[0])
		return false
	}
	exprs := make([]string, len(n.Policy.Spec.MatchConditions))
	for i, mc := range n.Policy.Spec.MatchConditions {
		exprs[i] = mc.Expression
	}
	unmet, errs := decideConditions(c.Validate(ctx, in.resource, in.va, params, in.ns, in.authz), exprs)
	switch {
	case unmet >= 0:
		e.notApplied(admissionpolicy.MatchConditionsNotMet(c.Names[unmet]))
		return false
	case len(errs) == 0:
		return true
	case *e.def.Spec.FailurePolicy == admissionregistrationv1.Ignore:
		e.notApplied(admissionpolicy.MatchConditionsNotMet(c.Names[0]) + " (failurePolicy Ignore: " + errs[0] + ")")
		return false
	}
	e.kyvernoError(n, errors.New(strings.Join(errs, "; ")))
	return false
}

// decideConditions reads the decisions of conditions compiled as
// validations: the index of the first false one (-1 if none) and the
// errors, each its bare cause.
func decideConditions(res validating.ValidateResult, exprs []string) (unmet int, errs []string) {
	for i, d := range res.Decisions {
		switch d.Evaluation {
		case validating.EvalDeny:
			return i, nil
		case validating.EvalError:
			msg := d.Message
			if i < len(exprs) {
				msg = strings.TrimPrefix(msg, "expression '"+exprs[i]+"' resulted in error: ")
			}
			errs = append(errs, msg)
		}
	}
	return -1, errs
}

// kyvernoError is a Kyverno policy's error before its validations ran,
// acted on by its validationActions in Kyverno's words ("failed to load
// context", Kyverno's engine's words for an exception's error).
func (e *evaluation) kyvernoError(n *Policy, err error) {
	b := n.Bindings[0]
	e.decidedBy(b)
	e.applied = true
	msg := "failed to load context: " + err.Error()
	e.out.Failures = append(e.out.Failures, msg)
	for _, action := range b.Spec.ValidationActions {
		switch action {
		case admissionregistrationv1.Deny:
			e.denied = append(e.denied, denial{binding: b, message: fmt.Sprintf("Policy %s error: %s", e.def.Name, msg), kyverno: true})
		case admissionregistrationv1.Warn:
			e.out.Warnings = append(e.out.Warnings, fmt.Sprintf("Policy %s error: %s", e.def.Name, msg))
		case admissionregistrationv1.Audit:
			e.failures = append(e.failures, failure{Message: msg, Policy: e.def.Name, Binding: b.Name, ValidationActions: b.Spec.ValidationActions})
		}
	}
}

// kyvernoPriority is the label that ranks exceptions (Kyverno's
// LabelPolicyExceptionPriority): the reportResult of the first applied
// exception of the highest priority above 0 decides, else the first's.
const kyvernoPriority = "polex.kyverno.io/priority"

func kyvernoReportResult(applied []*kyverno.Exception) string {
	highest, selected := 0, 0
	for i, x := range applied {
		if p, err := strconv.Atoi(x.Metadata.Labels[kyvernoPriority]); err == nil && p > highest {
			highest, selected = p, i
		}
	}
	return applied[selected].Kyverno.ReportResult
}

// KyvernoReadsObjects tells whether a Kyverno policy's evaluation reads
// the request's objects decoded whole before or beside its validations:
// for its exceptions, its matchConditions or its messageExpressions.
// Otherwise only the validator does, where the fast path gives way.
func (n *Policy) KyvernoReadsObjects() bool {
	if len(n.Kyverno.Exceptions) > 0 || n.KyvernoCompiled == nil || n.KyvernoCompiled.Conditions != nil {
		return true
	}
	for _, m := range n.KyvernoCompiled.Messages {
		if m != nil {
			return true
		}
	}
	return false
}
