// Package engine decides admission requests with the loaded policies. It is
// the one evaluation path: the HTTP server and every offline command call it,
// so what a policy does cannot depend on how it is run.
package engine

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/exception"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/imageverify"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Options configure an Engine.
type Options struct {
	// OwnNamespace is tollgate's own namespace, never injected nor validated
	// so that tollgate can always restart itself.
	OwnNamespace string
	// ExcludeNamespaces are never injected nor validated either, beyond the
	// system namespaces and OwnNamespace (the operator's --exclude-namespaces).
	ExcludeNamespaces []string
	// Namespaces, when set, makes the engine evaluate namespaceSelectors
	// itself. Without it they are the apiserver's to apply, as it does before
	// calling a webhook. A namespace it does not know has only the label
	// kubernetes.io/metadata.name, as the apiserver gives every namespace;
	// a ValidatingAdmissionPolicy that needs more of it is left to its
	// failurePolicy (validatingpolicy.Evaluate).
	Namespaces namespaces.Func
	// External gives ValidatingAdmissionPolicies their params and the
	// authorizer; a policy that needs one that is missing gets an error.
	External external.Sources
	// Clock is the time PolicyExceptions expire by; the system's unless set.
	Clock exception.Clock
	// Images verifies image signatures for verifyImages policies; such a
	// policy errs without it (its failurePolicy decides).
	Images *imageverify.Verifier
	// ImageBudget bounds the registry calls of one review (default 4 s).
	ImageBudget time.Duration
	// ImageCredentials, when set, give each workload's registry
	// credentials (its pull Secrets); else the Verifier's own are used.
	ImageCredentials imageverify.Credentials
	// NoCELFastPath makes every CEL program decide on its tracked
	// (reference) path, the fast path never asked (--cel-fast-path=false):
	// the same decisions, slower.
	NoCELFastPath bool
}

// Engine holds a policy set and the namespaces no policy may touch.
type Engine struct {
	set        *policy.Set
	excluded   sets.Set[string]
	namespaces namespaces.Func
	external   external.Sources
	exceptions *exception.Index
	// trackedOnly is Options.NoCELFastPath.
	trackedOnly bool
	images      *imageverify.Verifier
	imageBudget time.Duration
	credentials imageverify.Credentials
}

// New returns an engine for the set.
func New(set *policy.Set, opts Options) *Engine {
	excluded := sets.New(policy.SystemNamespaces...)
	if opts.OwnNamespace != "" {
		excluded.Insert(opts.OwnNamespace)
	}
	excluded.Insert(opts.ExcludeNamespaces...)
	return &Engine{set: set, excluded: excluded, namespaces: opts.Namespaces, external: opts.External, exceptions: exception.NewIndex(set.Exceptions, opts.Clock),
		trackedOnly: opts.NoCELFastPath, images: opts.Images, imageBudget: opts.ImageBudget,
		credentials: opts.ImageCredentials}
}

// Set returns the engine's policies.
func (e *Engine) Set() *policy.Set { return e.set }

// Excluded returns the namespaces the engine never acts in, sorted.
func (e *Engine) Excluded() []string { return sets.List(e.excluded) }

// Handler answers the requests of one webhook group.
func (e *Engine) Handler(g *policy.Group) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req *admission.Request) admission.Response {
		return e.Review(ctx, g, req)
	})
}

// Review decides a request sent to a group's webhook.
func (e *Engine) Review(ctx context.Context, g *policy.Group, req *admission.Request) admission.Response {
	return e.Evaluate(ctx, g, req).Response
}

// Evaluate decides a request and says what each of the group's policies
// made of it. Every warning, whichever kind of policy gave it, is bounded
// here, so that offline commands show what the server sends.
func (e *Engine) Evaluate(ctx context.Context, g *policy.Group, req *admission.Request) Evaluation {
	return e.evaluateAs(ctx, g, req, false)
}

// EvaluateStored is Evaluate of a stored object, as tollgate audit and the
// background audit decide it: a Kyverno policy with
// evaluation.admission.enabled false still applies there.
func (e *Engine) EvaluateStored(ctx context.Context, g *policy.Group, req *admission.Request) Evaluation {
	return e.evaluateAs(ctx, g, req, true)
}

func (e *Engine) evaluateAs(ctx context.Context, g *policy.Group, req *admission.Request, stored bool) Evaluation {
	ev := e.evaluate(ctx, g, req, stored)
	ev.Response.Warnings = admission.Warnings(ev.Response.Warnings)
	for _, r := range ev.Results {
		if r.Outcome == Warn {
			ev.Response.Warned = append(ev.Response.Warned, r.Policy)
		}
		if r.Exception != "" {
			ev.Response.Exempted = append(ev.Response.Exempted, admission.Exemption{Policy: r.Policy, Exception: r.Exception})
		}
	}
	return ev
}

func (e *Engine) evaluate(ctx context.Context, g *policy.Group, req *admission.Request, stored bool) Evaluation {
	if e.excluded.Has(req.Namespace) {
		return notApplicableAll(g, "namespace "+req.Namespace+" is exempt")
	}
	k, err := kindOf(g)
	if err != nil {
		return errorAll(g, admission.Errored(err))
	}
	if req.SubResource != "" && !k.subresources {
		return notApplicableAll(g, "subresource "+req.SubResource+" is not checked")
	}
	return k.run(e, ctx, g, req, stored)
}

// matching splits the group's policies into those that concern the request
// and the results of those that do not. exempt holds, for the policies that
// concern it, the rules exceptions lift (nil when none lifts any).
func (e *Engine) matching(g *policy.Group, req *admission.Request, labels, oldLabels map[string]string) (out []*policy.Policy, skipped []Result, exempt map[*policy.Policy]*ruleExemption) {
	t := policy.Target{
		Resource:    req.Resource.GroupResource(),
		SubResource: req.SubResource,
		Operation:   string(req.Operation),
		Namespace:   req.Namespace,
		Labels:      labels,
		OldLabels:   oldLabels,
	}
	var nsLabels map[string]string
	if ns := e.namespace(req.Namespace); ns != nil {
		nsLabels = ns.Labels
	}
	// Room for every policy's result: the caller appends the matching
	// policies' results to the skipped ones.
	skipped = make([]Result, 0, len(g.Policies))
	out = make([]*policy.Policy, 0, len(g.Policies))
	for _, p := range g.Policies {
		switch {
		case !p.Matches(&t):
			skipped = append(skipped, notApplicable(p.Name(), missed(p, &t)))
		case nsLabels != nil && !p.MatchesNamespace(nsLabels):
			skipped = append(skipped, notApplicable(p.Name(), "namespace "+req.Namespace+" is not selected"))
		default:
			x := e.exemption(p.Name(), req, labels)
			if x.Whole != nil {
				skipped = append(skipped, exempted(p.Name(), x.Whole))
				continue
			}
			if len(x.Rules) > 0 {
				if exempt == nil {
					exempt = map[*policy.Policy]*ruleExemption{}
				}
				exempt[p] = &ruleExemption{rules: x.Rules}
			}
			out = append(out, p)
		}
	}
	return out, skipped, exempt
}

// namespace returns the request's namespace object when the engine knows
// namespaces, nil otherwise or for cluster-scoped requests.
func (e *Engine) namespace(name string) *corev1.Namespace { return e.namespaces.Lookup(name) }
