package gatekeeper

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/frameworks/constraint/pkg/client/reviews"
	"github.com/open-policy-agent/frameworks/constraint/pkg/types"
	mutationtypes "github.com/open-policy-agent/gatekeeper/v3/pkg/mutation/types"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/target"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Violation is one Constraint's result for a request.
type Violation struct {
	Constraint string // the Constraint's name
	Kind       string // the Constraint's kind: its template's
	Message    string
	// Actions are what the Constraint does about it at the enforcement
	// point reviewed: deny, warn or dryrun (a scoped Constraint may do
	// several, or none here).
	Actions []string
	// Details is what the Rego rule gave beside the message.
	Details any
	// Err is set, and nothing else said, for a Constraint that selects
	// the request but could not be evaluated (ErrNoInventory).
	Err error
}

// ReviewRequest decides an admission request as Gatekeeper's webhook
// does (pkg/webhook/policy.go): a Namespace's namespace is cleared, the
// request's Namespace object is given for namespaceSelector and
// input.review.namespaceObject, and every Constraint whose match selects
// the request is evaluated. ns is nil for cluster-scoped requests. At the
// Gator point the request is reviewed as it is, as gator verify does.
func (e *Evaluator) ReviewRequest(ctx context.Context, req *admissionv1.AdmissionRequest, ns *corev1.Namespace, point string) ([]Violation, error) {
	gvk := schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	if e.config.excluded(point, gvk, req.Name, req.Namespace) {
		return nil, nil
	}
	if req.Kind.Kind == "Namespace" && req.Kind.Group == "" && req.Namespace != "" && point != Gator {
		r := *req
		r.Namespace = ""
		req = &r
	}
	review := &target.AugmentedReview{AdmissionRequest: req, Namespace: ns, Source: mutationtypes.SourceTypeOriginal, IsAdmission: true}
	return e.review(ctx, review, ns, point)
}

// ReviewObject decides a stored or offline object as Gatekeeper's audit
// and gator do: no admission request, the object as it is; none at all
// in a namespace the Config excludes from audit.
func (e *Evaluator) ReviewObject(ctx context.Context, obj *unstructured.Unstructured, ns *corev1.Namespace, point string) ([]Violation, error) {
	if e.config.excluded(point, obj.GroupVersionKind(), obj.GetName(), obj.GetNamespace()) {
		return nil, nil
	}
	review := &target.AugmentedUnstructured{Object: *obj, Namespace: ns, Source: mutationtypes.SourceTypeOriginal}
	return e.review(ctx, review, ns, point)
}

func (e *Evaluator) review(ctx context.Context, review any, ns *corev1.Namespace, point string) ([]Violation, error) {
	opts := []reviews.ReviewOpt{reviews.EnforcementPoint(point)}
	if ns != nil {
		m, err := namespaceMap(ns)
		if err != nil {
			return nil, err
		}
		opts = append(opts, reviews.Namespace(m))
	}
	resp, err := e.client.Review(ctx, review, opts...)
	if err != nil {
		return nil, fmt.Errorf("gatekeeper review: %w", err)
	}
	return e.withoutInventory(review, violations(resp.Results()))
}

// namespaceMap is the Namespace as the client takes it: its JSON fields
// as a map, as Gatekeeper's util.NamespaceToMap gives them, without its
// JSON round trip (it also logs and drops an error instead).
func namespaceMap(ns *corev1.Namespace) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ns)
	if err != nil {
		return nil, fmt.Errorf("namespace %s: %w", ns.Name, err)
	}
	return m, nil
}

func violations(results []*types.Result) []Violation {
	out := make([]Violation, 0, len(results))
	for _, r := range results {
		v := Violation{Constraint: r.Constraint.GetName(), Kind: r.Constraint.GetKind(), Message: r.Msg, Details: r.Metadata["details"]}
		if r.EnforcementAction == "scoped" {
			v.Actions = r.ScopedEnforcementActions
		} else {
			v.Actions = []string{r.EnforcementAction}
		}
		out = append(out, v)
	}
	return out
}
