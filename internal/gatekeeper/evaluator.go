package gatekeeper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	constraintclient "github.com/open-policy-agent/frameworks/constraint/pkg/client"
	"github.com/open-policy-agent/frameworks/constraint/pkg/client/drivers/rego"
	"github.com/open-policy-agent/frameworks/constraint/pkg/core/templates"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/target"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The enforcement points tollgate reviews at, as Gatekeeper names them: a
// Constraint's scoped enforcement actions are chosen by them.
const (
	Webhook = util.WebhookEnforcementPoint // admission, through serve, check and review
	Audit   = util.AuditEnforcementPoint   // stored objects: audit and background reports
	Gator   = util.GatorEnforcementPoint   // suites, as gator verify reviews them
)

// Evaluator is Gatekeeper's constraint client with the templates and
// Constraints of one set, and the objects referential templates read as
// data.inventory. It is safe for concurrent reviews.
type Evaluator struct {
	client *constraintclient.Client
	target *target.K8sValidationTarget
	config *Config
	// referential are the kinds of the templates that read data.inventory,
	// and matchers the match of each of their Constraints (inventory.go).
	referential map[string]string
	matchers    []referentialConstraint
	// inventory tells whether data.inventory holds what was given to sync;
	// synced is what SetInventory put there.
	inventory atomic.Bool
	synced    []*unstructured.Unstructured
}

// SetConfig applies a Gatekeeper Config's exclusions to every later
// review. It is called before the first review, never during one.
func (e *Evaluator) SetConfig(c *Config) { e.config = c }

// ErrNoRego is the error of a template that only Gatekeeper's CEL driver
// could run.
var ErrNoRego = errors.New("the template has no Rego code: its K8sNativeValidation (CEL) code needs Gatekeeper's k8scel driver, which does not build with tollgate's k8s.io v0.37 libraries; add the template's Rego (gatekeeper-library's templates all have it)")

// HasRego tells whether a template has Rego code for some target.
func HasRego(t *templates.ConstraintTemplate) bool {
	for _, tg := range t.Spec.Targets {
		if tg.Rego != "" {
			return true
		}
		for _, c := range tg.Code {
			if c.Engine == "Rego" {
				return true
			}
		}
	}
	return false
}

// ReadsInventory tells whether a template's Rego reads data.inventory,
// the objects Gatekeeper syncs for referential templates.
func ReadsInventory(t *templates.ConstraintTemplate) bool {
	for _, tg := range t.Spec.Targets {
		code := append([]string{tg.Rego}, tg.Libs...)
		for _, c := range tg.Code {
			if c.Engine == "Rego" && c.Source != nil {
				code = append(code, fmt.Sprint(c.Source.Value))
			}
		}
		for _, src := range code {
			if strings.Contains(src, "data.inventory") {
				return true
			}
		}
	}
	return false
}

// NewEvaluator builds the client with Gatekeeper's Kubernetes validation
// target and the Rego driver, and adds the templates, then the
// Constraints. A template the driver cannot compile, or a Constraint whose
// kind no template defines or whose parameters its schema refuses, is an
// error naming it.
func NewEvaluator(ctx context.Context, tmpls []*templates.ConstraintTemplate, constraints []*unstructured.Unstructured) (*Evaluator, error) {
	driver, err := rego.New()
	if err != nil {
		return nil, fmt.Errorf("gatekeeper rego driver: %w", err)
	}
	tgt := &target.K8sValidationTarget{}
	c, err := constraintclient.NewClient(
		constraintclient.Targets(tgt),
		constraintclient.Driver(driver),
		constraintclient.EnforcementPoints(Webhook, Audit, Gator),
	)
	if err != nil {
		return nil, fmt.Errorf("gatekeeper client: %w", err)
	}
	e := &Evaluator{client: c, target: tgt, referential: map[string]string{}}
	for _, t := range tmpls {
		if err := e.AddTemplate(ctx, t); err != nil {
			return nil, err
		}
	}
	for _, con := range constraints {
		if err := e.AddConstraint(ctx, con); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// AddTemplate compiles a template's Rego and makes its Constraint kind known.
func (e *Evaluator) AddTemplate(ctx context.Context, t *templates.ConstraintTemplate) error {
	if !HasRego(t) {
		return fmt.Errorf("ConstraintTemplate %q: %w", t.GetName(), ErrNoRego)
	}
	if _, err := e.client.AddTemplate(ctx, t); err != nil {
		return fmt.Errorf("ConstraintTemplate %q: %w", t.GetName(), err)
	}
	if ReadsInventory(t) {
		e.referential[t.Spec.CRD.Spec.Names.Kind] = t.GetName()
	}
	return nil
}

// AddConstraint adds a Constraint, its parameters checked against its
// template's schema and its match and enforcement action against
// Gatekeeper's.
func (e *Evaluator) AddConstraint(ctx context.Context, c *unstructured.Unstructured) error {
	if _, err := e.client.AddConstraint(ctx, c); err != nil {
		return fmt.Errorf("%s %q: %w", c.GetKind(), c.GetName(), err)
	}
	return e.addMatcher(c)
}

// AddData adds an object to data.inventory, where referential templates
// read it (the objects a Gatekeeper Config syncs).
func (e *Evaluator) AddData(ctx context.Context, obj *unstructured.Unstructured) error {
	if _, err := e.client.AddData(ctx, obj); err != nil {
		return fmt.Errorf("inventory %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// RemoveData takes an object out of data.inventory.
func (e *Evaluator) RemoveData(ctx context.Context, obj *unstructured.Unstructured) error {
	if _, err := e.client.RemoveData(ctx, obj); err != nil {
		return fmt.Errorf("inventory %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
