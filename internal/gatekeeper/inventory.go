package gatekeeper

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/open-policy-agent/frameworks/constraint/pkg/core/constraints"
	"github.com/open-policy-agent/frameworks/constraint/pkg/core/templates"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/cachemanager/parser"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrNoInventory is why a referential Constraint (its template reads
// data.inventory) is not evaluated: nothing was given to fill the
// inventory, and an empty one would pass everything.
var ErrNoInventory = errors.New("its template reads data.inventory, the objects Gatekeeper syncs, and tollgate does not hold them: offline, give them with --references FILE|DIR (or among the input files); tollgate serve syncs them from its cluster once its informers have synced (never without cluster access); tollgate audit does not sync them")

// referentialConstraint is a Constraint of a template that reads
// data.inventory, with its match.
type referentialConstraint struct {
	kind, name, template string
	match                constraints.Matcher
}

// addMatcher keeps the match of a referential Constraint, so that a
// review without an inventory names exactly the Constraints it selects.
func (e *Evaluator) addMatcher(c *unstructured.Unstructured) error {
	tmpl, ok := e.referential[c.GetKind()]
	if !ok {
		return nil
	}
	m, err := e.target.ToMatcher(c)
	if err != nil {
		return fmt.Errorf("%s %q: %w", c.GetKind(), c.GetName(), err)
	}
	e.matchers = append(e.matchers, referentialConstraint{kind: c.GetKind(), name: c.GetName(), template: tmpl, match: m})
	return nil
}

// InventoryGiven says that data.inventory holds every object given to
// sync (none may be a real answer): referential Constraints are evaluated
// from then on.
func (e *Evaluator) InventoryGiven() { e.inventory.Store(true) }

// SetInventory makes data.inventory exactly the objects of the kinds the
// Config syncs among objs (others are left out, as Gatekeeper syncs only
// those), replacing what an earlier call set, and marks it given. It is
// called before reviews, never during one.
func (e *Evaluator) SetInventory(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range e.synced {
		if err := e.RemoveData(ctx, o); err != nil {
			return err
		}
	}
	e.synced = nil
	syncs := e.Syncs()
	for _, o := range objs {
		if !slices.Contains(syncs, o.GroupVersionKind()) {
			continue
		}
		if err := e.AddData(ctx, o); err != nil {
			return err
		}
		e.synced = append(e.synced, o)
	}
	e.InventoryGiven()
	return nil
}

// Referential tells whether a Constraint's template reads data.inventory.
func (e *Evaluator) Referential(kind string) bool {
	_, ok := e.referential[kind]
	return ok
}

// withoutInventory replaces, when no inventory was given, the results of
// referential Constraints by an error for each of them that selects the
// review: never a pass they could not decide, never an error for a
// request they do not select.
func (e *Evaluator) withoutInventory(review any, vs []Violation) ([]Violation, error) {
	if e.inventory.Load() || len(e.matchers) == 0 {
		return vs, nil
	}
	out := vs[:0]
	for _, v := range vs {
		if !e.Referential(v.Kind) {
			out = append(out, v)
		}
	}
	handled, rv, err := e.target.HandleReview(review)
	if err != nil || !handled {
		return nil, fmt.Errorf("gatekeeper review: %v not handled: %w", review, err)
	}
	for _, m := range e.matchers {
		ok, err := m.match.Match(rv)
		if err != nil {
			return nil, fmt.Errorf("%s %q: match: %w", m.kind, m.name, err)
		}
		if ok {
			out = append(out, Violation{Constraint: m.name, Kind: m.kind,
				Err: fmt.Errorf("ConstraintTemplate %q: %w", m.template, ErrNoInventory)})
		}
	}
	return out, nil
}

// Covers is nil when the Config syncs what a referential template says it
// needs (its metadata.gatekeeper.sh/requires-sync-data annotation, read
// by Gatekeeper's own parser: each requirement met by any of its kinds),
// else an error naming what to sync. A template that says nothing needs
// the Config to sync something: an inventory Gatekeeper never fills would
// pass every request.
func (c *Config) Covers(t *templates.ConstraintTemplate) error {
	var synced []schema.GroupVersionKind
	if c != nil {
		synced = c.SyncOnly
	}
	reqs, err := parser.ReadSyncRequirements(t)
	if err != nil {
		return fmt.Errorf("ConstraintTemplate %q: %w", t.GetName(), err)
	}
	if len(reqs) == 0 {
		if len(synced) == 0 {
			return fmt.Errorf("ConstraintTemplate %q reads data.inventory, and no Gatekeeper Config (spec.sync.syncOnly) or SyncSet of the set syncs anything: add one naming the kinds it reads", t.GetName())
		}
		return nil
	}
	for _, req := range reqs {
		met := false
		for gvk := range req {
			if slices.Contains(synced, gvk) {
				met = true
				break
			}
		}
		if !met {
			return fmt.Errorf("ConstraintTemplate %q needs one of %s synced (its %s annotation); add it to the Gatekeeper Config's spec.sync.syncOnly, or a SyncSet", t.GetName(), req, "metadata.gatekeeper.sh/requires-sync-data")
		}
	}
	return nil
}

// Syncs are the kinds the Config syncs into data.inventory.
func (e *Evaluator) Syncs() []schema.GroupVersionKind {
	if e.config == nil {
		return nil
	}
	return e.config.SyncOnly
}

// NeedsInventory tells whether some Constraint reads data.inventory.
func (e *Evaluator) NeedsInventory() bool { return len(e.matchers) > 0 }
