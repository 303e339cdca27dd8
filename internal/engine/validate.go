package engine

import (
	"context"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/labelrule"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// verdict is what one policy found in one request.
type verdict struct {
	skipped  bool
	unmet    string // the condition that was false, when skipped
	problems []string
	reason   string
	err      error
}

// validate runs a group's validating policies: label rules on CREATE and
// UPDATE, CEL expressions on whatever operations the policy matches.
func (e *Engine) validate(ctx context.Context, g *policy.Group, req *admission.Request) Evaluation {
	in, err := newInput(req)
	if err != nil {
		return errorAll(g, admission.BadRequest(err))
	}
	policies, results, exempt := e.matching(g, req, in.labels, in.oldLabels)
	ns := e.namespace(req.Namespace)
	var a answers
	for _, p := range policies {
		x := exempt[p]
		subject, v := e.judge(ctx, p, req, in, ns, x)
		r := Result{Policy: p.Name(), Outcome: Pass}
		switch {
		case v.skipped:
			r = notApplicable(p.Name(), admissionpolicy.MatchConditionsNotMet(v.unmet))
		case v.err != nil:
			r = a.undecided(p, subject, v.err)
		case len(v.problems) > 0:
			r = a.violated(p, p.Spec.Validate.Action, subject, v.problems, validatingpolicy.StatusCode(v.reason))
		}
		results = append(results, x.apply(r))
	}
	return a.evaluation(results)
}

// judge evaluates one policy on the request, or on the Pod template of a
// Pod controller when the policy checks those.
func (e *Engine) judge(ctx context.Context, p *policy.Policy, req *admission.Request, in *input, ns *corev1.Namespace, x *ruleExemption) (labelrule.Subject, verdict) {
	subject := labelrule.Subject{Kind: req.Kind.Kind, Name: firstNonEmpty(in.meta.Name, req.Name), GenerateName: in.meta.GenerateName}
	labels := in.labels
	celIn := func() (*cel.Input, error) { return in.cel(req, ns) }
	if p.Spec.Match.PodControllers && policy.IsPodController(req.Resource.GroupResource()) {
		subject.Template = true
		tmpl, err := in.podTemplate(req, ns)
		if err != nil {
			return subject, verdict{err: err}
		}
		labels = tmpl.labels
		celIn = func() (*cel.Input, error) { return tmpl.celInput, nil }
	}
	var v verdict
	if prog := p.Program(); prog != nil {
		ci, err := celIn()
		if err != nil {
			return subject, verdict{err: err}
		}
		ci.TrackedOnly = e.trackedOnly
		ci.References = e.external.References
		out := x.celVerdict(p, prog.Evaluate(ctx, ci))
		switch {
		case out.Err != nil:
			return subject, verdict{err: out.Err}
		case out.Skipped:
			return subject, verdict{skipped: true, unmet: out.Unmet}
		}
		for _, viol := range out.Violations {
			v.problems = append(v.problems, viol.Message)
			if v.reason == "" {
				v.reason = viol.Reason
			}
		}
	}
	if rules := p.Spec.Validate; len(rules.Labels) > 0 && (req.Operation == admission.Create || req.Operation == admission.Update) {
		if problems := x.labelProblems(rules, labels); len(problems) > 0 {
			if rules.Message != "" {
				problems = []string{rules.Message}
			}
			v.problems = append(v.problems, problems...)
			if v.reason == "" {
				v.reason = "Forbidden" // a label rule has no reason of its own
			}
		}
	}
	return subject, v
}

func reasonName(code int32) string {
	switch code {
	case http.StatusUnprocessableEntity:
		return "Invalid"
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusRequestEntityTooLarge:
		return "RequestEntityTooLarge"
	default:
		return "Forbidden"
	}
}

func firstCode(cur, next int32) int32 {
	if cur != 0 {
		return cur
	}
	return next
}

// auditKey is a valid audit annotation key for a policy: at most 63 bytes.
func auditKey(name string) string {
	if len(name) > 63 {
		return strings.TrimRight(name[:63], ".-")
	}
	return name
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
