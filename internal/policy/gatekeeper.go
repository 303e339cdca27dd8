package policy

// Gatekeeper's ConstraintTemplates and Constraints, read and decided by
// package gatekeeper. Each Constraint is a policy of the set; templates
// are joined to them in NewSet, where one evaluator is built for all.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/open-policy-agent/frameworks/constraint/pkg/core/templates"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/gatekeeper"
)

// Constraint is a Gatekeeper Constraint of the set.
type Constraint struct {
	Object *unstructured.Unstructured
	// Evaluator holds every template and Constraint of the set; NewSet
	// builds it.
	Evaluator *gatekeeper.Evaluator
}

// GatekeeperName names a Constraint's policy as kubectl names it,
// <kind>/<name>: Constraints of different kinds may share a name.
func GatekeeperName(kind, name string) string { return strings.ToLower(kind) + "/" + name }

// GatekeeperGroupID names the group, path and webhook of the set's
// Constraints: like Gatekeeper's own webhook, one for all of them.
const GatekeeperGroupID = "gatekeeper"

func decodeGatekeeperTemplate(js []byte) (*Policy, field.ErrorList) {
	t, err := gatekeeper.DecodeTemplate(js)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}
	}
	p := &Policy{Metadata: Metadata{Name: t.GetName()}, gkTemplate: t}
	if !gatekeeper.HasRego(t) {
		return p, field.ErrorList{field.Invalid(field.NewPath("spec", "targets"), "K8sNativeValidation", gatekeeper.ErrNoRego.Error())}
	}
	if t.Spec.CRD.Spec.Names.Kind == "" {
		return p, field.ErrorList{field.Required(field.NewPath("spec", "crd", "spec", "names", "kind"), "the kind of the template's Constraints")}
	}
	return p, nil
}

func decodeGatekeeperConfig(js []byte) (*Policy, field.ErrorList) {
	c, err := gatekeeper.DecodeConfig(js)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}
	}
	return &Policy{Metadata: Metadata{Name: gatekeeper.ConfigName}, gkConfig: c}, nil
}

func decodeGatekeeperSyncSet(js []byte) (*Policy, field.ErrorList) {
	gvks, err := gatekeeper.DecodeSyncSet(js)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}
	}
	var meta struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(js, &meta)
	// Never nil, so that NewSet knows it for a SyncSet.
	return &Policy{Metadata: Metadata{Name: "syncset/" + meta.Metadata.Name}, gkSyncs: append([]schema.GroupVersionKind{}, gvks...)}, nil
}

func decodeGatekeeperConstraint(js []byte) (*Policy, field.ErrorList) {
	c, err := gatekeeper.DecodeConstraint(js)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("apiVersion"), nil, err.Error())}
	}
	p := &Policy{
		Metadata: Metadata{Name: GatekeeperName(c.GetKind(), c.GetName()), Labels: c.GetLabels(), Annotations: c.GetAnnotations()},
		// Gatekeeper's webhook: failurePolicy Ignore, CREATE and UPDATE.
		Spec:       Spec{FailurePolicy: Ignore, Match: Match{Resources: constraintResources(c), Operations: []string{"CREATE", "UPDATE"}}},
		Gatekeeper: &Constraint{Object: c},
	}
	if c.GetName() == "" {
		return p, field.ErrorList{field.Required(field.NewPath("metadata", "name"), "every Constraint needs a name")}
	}
	if errs := p.compile(); len(errs) > 0 {
		return p, errs
	}
	return p, nil
}

// constraintResources are the resources a Constraint's spec.match.kinds
// can select, by API group: every resource of each group it names ("*" when it
// names no kinds, or any group). Gatekeeper's own webhook is sent every
// resource; this is never wider.
func constraintResources(c *unstructured.Unstructured) []string {
	kinds, found, err := unstructured.NestedSlice(c.Object, "spec", "match", "kinds")
	if err != nil || !found || len(kinds) == 0 {
		return []string{"*"}
	}
	var out []string
	for _, k := range kinds {
		m, ok := k.(map[string]any)
		if !ok {
			return []string{"*"}
		}
		groups, _, _ := unstructured.NestedStringSlice(m, "apiGroups")
		if len(groups) == 0 {
			return []string{"*"}
		}
		for _, g := range groups {
			if g == "*" {
				return []string{"*"}
			}
			out = append(out, g+"/*")
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// attachGatekeeper takes the templates and the Config out of policies and
// builds one evaluator with them and every Constraint. A Constraint of a kind no
// template defines is an error; so is a template the Rego driver cannot
// compile, a Constraint whose parameters its template's schema
// refuses, and a second Config, each naming its document.
func attachGatekeeper(policies []*Policy) ([]*Policy, []error) {
	var tmpls []*Policy
	var constraints []*Policy
	var config *Policy
	var syncs []schema.GroupVersionKind
	var errs []error
	out := policies[:0:0]
	for _, p := range policies {
		switch {
		case p.gkTemplate != nil:
			tmpls = append(tmpls, p)
			continue
		case p.gkSyncs != nil:
			syncs = append(syncs, p.gkSyncs...)
			continue
		case p.gkConfig != nil:
			if config != nil {
				errs = append(errs, fmt.Errorf("%s: a second Gatekeeper Config (the first: %s): Gatekeeper reads one", p.Source, config.Source))
			}
			config = p
			continue
		case p.Gatekeeper != nil:
			constraints = append(constraints, p)
		}
		out = append(out, p)
	}
	if len(constraints) == 0 {
		return out, errs
	}
	ctx := context.Background()
	e, err := gatekeeper.NewEvaluator(ctx, nil, nil)
	if err != nil {
		return out, append(errs, err)
	}
	var cfg *gatekeeper.Config
	if config != nil {
		cfg = config.gkConfig
	}
	cfg = cfg.WithSyncs(syncs)
	e.SetConfig(cfg)
	kinds := map[string]*templates.ConstraintTemplate{}
	for _, t := range tmpls {
		kind := t.gkTemplate.Spec.CRD.Spec.Names.Kind
		if prev, ok := kinds[kind]; ok {
			errs = append(errs, fmt.Errorf("%s: ConstraintTemplate %q: kind %s is also defined by ConstraintTemplate %q", t.Source, t.Name(), kind, prev.GetName()))
			continue
		}
		if gatekeeper.ReadsInventory(t.gkTemplate) {
			if err := cfg.Covers(t.gkTemplate); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", t.Source, err))
				continue
			}
		}
		if err := e.AddTemplate(ctx, t.gkTemplate); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.Source, err))
			continue
		}
		kinds[kind] = t.gkTemplate
	}
	for _, c := range constraints {
		kind := c.Gatekeeper.Object.GetKind()
		if _, ok := kinds[kind]; !ok {
			errs = append(errs, fmt.Errorf("%s: %s %q: no ConstraintTemplate of the set defines kind %s", c.Source, kind, c.Gatekeeper.Object.GetName(), kind))
			continue
		}
		if err := e.AddConstraint(ctx, c.Gatekeeper.Object); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.Source, err))
			continue
		}
		c.Gatekeeper.Evaluator = e
	}
	return out, errs
}

// GatekeeperEvaluator is the evaluator of the set's Constraints, nil
// when it has none.
func (s *Set) GatekeeperEvaluator() *gatekeeper.Evaluator {
	for _, p := range s.Policies {
		if p.Gatekeeper != nil && p.Gatekeeper.Evaluator != nil {
			return p.Gatekeeper.Evaluator
		}
	}
	return nil
}

// gatekeeperMatch is the match of the set's one Gatekeeper webhook: every
// resource any Constraint may select.
func gatekeeperMatch(ps []*Policy) Match {
	var rs []string
	for _, p := range ps {
		rs = append(rs, p.Spec.Match.Resources...)
	}
	if slices.Contains(rs, "*") {
		rs = []string{"*"}
	}
	slices.Sort(rs)
	return Match{Resources: slices.Compact(rs), Operations: []string{"CREATE", "UPDATE"}}
}
