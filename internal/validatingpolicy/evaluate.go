// Package validatingpolicy owns Kubernetes' ValidatingAdmissionPolicies
// (VAPs) and their bindings, as the kube-apiserver has them. It reads
// them, applies the apiserver's defaults and refuses what it would not
// store (decode.go); internal/cel compiles them with the apiserver's
// compiler. Evaluate enforces one: it matches a request against the
// policy's matchConstraints and each binding's matchResources with the
// apiserver's matcher, evaluates the compiled policy (on the fast path
// where it can decide, fast.go; else the apiserver's validator), and
// turns decisions into a denial, warnings and audit annotations by each
// binding's validationActions, in the apiserver's words. Kyverno's policies, read
// as VAPs by internal/kyverno, are decided here as Kyverno decides them
// (kyverno.go).
package validatingpolicy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/kyverno"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
)

// Decision is what a ValidatingAdmissionPolicy made of a request.
type Decision struct {
	// Matched: the policy's matchConstraints match the request.
	Matched bool
	// NotApplied says why the policy did not apply to the request, as the
	// apiserver decides it: matchConstraints not matching, no binding, no
	// binding selecting the request, no param (parameterNotFoundAction
	// Allow), or a match condition false for every binding and param that
	// selected it. Empty when the policy applied, or could not be decided
	// (Denial, Undecided, Ignored).
	NotApplied string
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
	// Undecided says what could not be evaluated for want of a namespace
	// (see Evaluate) under failurePolicy Ignore; under Fail it denies.
	Undecided []string
	// Ignored are the errors failurePolicy Ignore made the apiserver admit
	// (a binding or policy it cannot configure, an expression that errs):
	// the policy was not evaluated, which is not a pass.
	Ignored []string
	// KyvernoExceptions name (namespace/name) the Kyverno PolicyExceptions
	// that applied when one of them lifted a Kyverno policy whole, and
	// KyvernoResult is the result that gives the policy: skip or pass.
	KyvernoExceptions []string
	KyvernoResult     string
	// Bindings name the bindings that decided: their validations ran, or
	// they could not be configured or decided; in the policy's order.
	Bindings []string
}

var objectInterfaces = k8sadmission.NewObjectInterfacesFromScheme(runtime.NewScheme())

// Evaluate runs one ValidatingAdmissionPolicy on a request.
// namespaces says what it knows of namespaces; nil when nothing. Where the
// answer depends on a namespace it does not know, Evaluate never concludes
// that the policy does not apply: a namespaceSelector needing more than the
// label kubernetes.io/metadata.name, or an expression reading
// namespaceObject, is undecided, and the policy's failurePolicy decides
// with an error naming what is missing. Selectors the apiserver has already
// applied (a binding's webhook entry) are left out of n by the caller. ext
// gives the policy's params and the authorizer. A Kyverno policy's
// PolicyExceptions apply if in force at now.
func Evaluate(ctx context.Context, n *Policy, rv *admissionpolicy.Review, namespaces namespaces.Func, ext external.Sources, now time.Time) (Decision, error) {
	// Why the policy's matchConstraints miss is worded only when no
	// autogen policy matches either (it costs more than the match).
	explain := len(n.Autogen) == 0
	out, err := evaluate(ctx, n, rv, namespaces, ext, now, explain)
	if err != nil || out.Matched || out.NotApplied == "" {
		return out, err
	}
	// A Kyverno policy's autogen policies match Pod controllers, which the
	// policy does not: at most one of them matches.
	for _, a := range n.Autogen {
		if o, err := evaluate(ctx, a, rv, namespaces, ext, now, false); err != nil || o.Matched || o.NotApplied == "" {
			return o, err
		}
	}
	if !explain {
		return evaluate(ctx, n, rv, namespaces, ext, now, true)
	}
	return out, nil
}

// unexplained is the NotApplied of a policy whose matchConstraints miss,
// when why is not worded.
const unexplained = "matchConstraints do not match"

func evaluate(ctx context.Context, n *Policy, rv *admissionpolicy.Review, namespaces namespaces.Func, ext external.Sources, now time.Time, explain bool) (Decision, error) {
	n, err := n.ForStore(ext.References)
	if err != nil {
		return Decision{}, err
	}
	req := rv.Request
	attrs, err := rv.MatchAttributes() // the objects' metadata: enough to match
	if err != nil {
		return Decision{}, err
	}
	nsLister := &lister{namespaces: namespaces}
	matcher := generic.NewPolicyMatcher(matching.NewMatcher(nsLister, nil))
	def := n.Policy
	e := &evaluation{def: def, kyverno: n.Kyverno, audit: map[string]string{}}
	// matchError is an error of the matcher: undecided when it came from a
	// namespace tollgate does not know, else a configuration error.
	matchError := func(err error, binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
		if nsErr := nsLister.unknown(); nsErr != nil {
			e.undecided(nsErr, binding)
		} else {
			e.configError(err, binding)
		}
	}
	nsLister.prepare(def.Spec.MatchConstraints)
	matches, resource, kind, err := matcher.DefinitionMatches(attrs, objectInterfaces, validating.NewValidatingAdmissionPolicyAccessor(def))
	if err != nil {
		matchError(err, nil)
		return e.finish(), nil
	}
	if !matches {
		e.out.NotApplied = unexplained
		if explain {
			e.out.NotApplied = admissionpolicy.PolicyMiss(matcher, attrs, def.Spec.MatchConstraints)
		}
		return e.out, nil
	}
	e.out.Matched = true
	if err := ext.ParamKind(def.Spec.ParamKind); err != nil {
		e.configError(err, nil)
		return e.finish(), nil
	}
	authz := ext.NewAuthorizer()
	// namespaceObject, as the apiserver sets it: null for cluster-scoped
	// requests and for a Namespace itself.
	var ns *corev1.Namespace
	nsKnown := true
	isNamespace := req.Kind.Kind == "Namespace" && req.Kind.Group == "" && req.Kind.Version == "v1"
	if req.Namespace != "" && (!isNamespace || n.Kyverno != nil && req.Operation != admission.Create) {
		// Kyverno looks the request's namespace up, a Namespace's own too:
		// the stored one, which a CREATE does not have yet.
		nsKnown = false
		if namespaces != nil {
			ns, nsKnown = namespaces(req.Namespace)
		}
	}
	// va is the request with its objects decoded whole, for the
	// apiserver's evaluators: made on first need (the fast path reads the
	// review's JSON), once per webhook call (rv).
	var va *k8sadmission.VersionedAttributes
	versioned := func() (*k8sadmission.VersionedAttributes, error) {
		if va == nil {
			whole, err := rv.Attributes()
			if err != nil {
				return nil, err
			}
			va = &k8sadmission.VersionedAttributes{Attributes: whole, VersionedKind: kind,
				VersionedObject: k8sadmission.NewLazyObject(whole.GetObject()), VersionedOldObject: k8sadmission.NewLazyObject(whole.GetOldObject())}
		}
		return va, nil
	}
	// The objects are decoded for every policy the fast path cannot
	// decide, whatever else fails, as before it: an object that cannot be
	// decoded errs alike on both paths. So they are for a Kyverno policy
	// whose exceptions, matchConditions or messageExpressions read them.
	if n.Validator.FastPath() != "" || n.Kyverno != nil && n.KyvernoReadsObjects() {
		if _, err := versioned(); err != nil {
			return Decision{}, err
		}
	}
	var exceptions runtime.Object // a Kyverno policy's exceptions variable, as its param
	if n.Kyverno != nil && len(n.Bindings) > 0 {
		var whole bool
		in := kyvernoInput{resource: resource, va: va, ns: ns, nsKnown: nsKnown, authz: authz, now: now}
		exceptions, whole = e.kyvernoExceptions(ctx, n, in)
		if whole || exceptions == nil || !e.kyvernoConditionsMet(ctx, n, in, exceptions) {
			return e.finish(), nil
		}
		e.messages = in.messages(ctx, n, exceptions)
	}
	if len(n.Bindings) == 0 {
		e.notApplied(admissionpolicy.NoBinding)
	}
	for _, b := range n.Bindings {
		nsLister.prepare(b.Spec.MatchResources)
		bm, err := matcher.BindingMatches(attrs, objectInterfaces, validating.NewValidatingAdmissionPolicyBindingAccessor(b))
		if err != nil {
			matchError(err, b)
			continue
		}
		if !bm {
			e.notApplied(admissionpolicy.BindingMiss(matcher, attrs, b.Name, b.Spec.MatchResources))
			continue
		}
		params, err := ext.Collect(def.Spec.ParamKind, b.Spec.ParamRef, req.Namespace)
		if err != nil {
			e.configError(err, b)
			continue
		}
		if len(params) == 0 {
			e.notApplied(fmt.Sprintf("binding %s: no param found (parameterNotFoundAction Allow)", b.Name))
			continue
		}
		if !nsKnown && len(params) > 0 && n.Validator.UsesNamespaceObject {
			e.undecided(fmt.Errorf("namespaceObject: namespace %q unknown: %s", req.Namespace, needNamespace), b)
			continue
		}
		for _, param := range params {
			if exceptions != nil {
				param = exceptions
			}
			res, fast := decideFast(ctx, n, rv, param, exceptions, kind, resource, ns)
			if !fast {
				if _, err := versioned(); err != nil {
					return Decision{}, err
				}
				res = n.Validator.Validate(ctx, resource, va, param, ns, authz)
			}
			if name, unmet := n.Validator.Unmet(ctx, res, va, param, authz); unmet {
				e.notApplied(admissionpolicy.MatchConditionsNotMet(name))
				continue
			}
			e.applied = true
			e.record(b, res)
		}
	}
	return e.finish(), nil
}

// evaluation gathers what one policy's bindings decided about a request.
type evaluation struct {
	def      *admissionregistrationv1.ValidatingAdmissionPolicy
	kyverno  *kyverno.Info
	out      Decision
	denied   []denial
	failures []failure
	audit    map[string]string
	messages func(i int) string // words a Kyverno policy's failing validation i (kyvernoInput.messages)
	// applied: some binding's validations ran; else why lists, per binding
	// (or param), why they did not.
	applied bool
	why     []string
}

// notApplied records why a binding (or one of its params) did not apply.
func (e *evaluation) notApplied(why string) {
	if !slices.Contains(e.why, why) {
		e.why = append(e.why, why)
	}
}

// configError is a configuration error of the policy (binding nil) or of a
// binding, denied under failurePolicy Fail as the apiserver words it.
func (e *evaluation) configError(err error, binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	e.decidedBy(binding)
	what := "policy"
	if binding != nil {
		what = "binding"
	}
	msg := fmt.Sprintf("failed to configure %s: %v", what, err)
	if *e.def.Spec.FailurePolicy == admissionregistrationv1.Ignore {
		e.out.Ignored = append(e.out.Ignored, msg)
		return
	}
	e.denied = append(e.denied, denial{binding: binding, message: msg})
}

// undecided is what tollgate could not evaluate, named by err: denied
// under failurePolicy Fail, reported under Ignore; never "does not apply".
func (e *evaluation) undecided(err error, binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	e.decidedBy(binding)
	if *e.def.Spec.FailurePolicy == admissionregistrationv1.Ignore {
		e.out.Undecided = append(e.out.Undecided, err.Error())
		return
	}
	e.denied = append(e.denied, denial{binding: binding, message: err.Error()})
}

// decidedBy names a binding among those that decided (nil: the policy).
func (e *evaluation) decidedBy(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	if b != nil && !slices.Contains(e.out.Bindings, b.Name) {
		e.out.Bindings = append(e.out.Bindings, b.Name)
	}
}

// record acts on a validation result by the binding's validationActions.
func (e *evaluation) record(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, res validating.ValidateResult) {
	e.decidedBy(b)
	if e.kyverno != nil {
		e.recordKyverno(b, res)
		return
	}
	for i, d := range res.Decisions {
		if d.Evaluation == validating.EvalError && d.Action != validating.ActionDeny {
			e.out.Ignored = append(e.out.Ignored, d.Message) // failurePolicy Ignore
			continue
		}
		if d.Action != validating.ActionDeny {
			continue
		}
		e.out.Failures = append(e.out.Failures, d.Message)
		for _, action := range b.Spec.ValidationActions {
			switch action {
			case admissionregistrationv1.Deny:
				e.denied = append(e.denied, denial{binding: b, message: d.Message, reason: string(d.Reason)})
			case admissionregistrationv1.Warn:
				e.out.Warnings = append(e.out.Warnings, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", e.def.Name, b.Name, d.Message))
			case admissionregistrationv1.Audit:
				e.failures = append(e.failures, failure{Message: d.Message, Policy: e.def.Name, Binding: b.Name, ExpressionIndex: i, ValidationActions: b.Spec.ValidationActions})
			}
		}
	}
	for _, a := range res.AuditAnnotations {
		switch a.Action {
		case validating.AuditAnnotationActionPublish:
			e.audit[e.def.Name+"/"+a.Key] = a.Value
		case validating.AuditAnnotationActionError:
			e.denied = append(e.denied, denial{binding: b, message: a.Error})
		case validating.AuditAnnotationActionExclude:
			if a.Error != "" {
				e.out.Ignored = append(e.out.Ignored, a.Error) // failurePolicy Ignore
			}
		}
	}
}

// finish adds the audit annotations and words the first denial.
func (e *evaluation) finish() Decision {
	if len(e.failures) > 0 {
		v, _ := json.Marshal(e.failures)
		e.audit["validation.policy.admission.k8s.io/validation_failure"] = string(v)
	}
	if len(e.audit) > 0 {
		e.out.AuditAnnotations = e.audit
	}
	if !e.applied && len(e.denied) == 0 && len(e.out.Undecided) == 0 && len(e.out.Ignored) == 0 {
		e.out.NotApplied = strings.Join(e.why, "; ")
	}
	return e.out.finish(e.def, e.denied)
}

type denial struct {
	binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	message string
	reason  string
	// kyverno: message is worded as Kyverno words it, whole.
	kyverno bool
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
func (o Decision) finish(def *admissionregistrationv1.ValidatingAdmissionPolicy, denied []denial) Decision {
	if len(denied) == 0 {
		return o
	}
	d := denied[0]
	if d.kyverno {
		o.Denial = d.message // worded by recordKyverno
		return o
	}
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
