package policy

import (
	"encoding/json"
	"slices"
)

// Action is what a group of policies does: validate or mutate (inject).
type Action string

// The two webhook kinds tollgate registers.
const (
	ActionValidate Action = "validate"
	ActionMutate   Action = "mutate"
)

// GroupType is the kind of policy a group holds, and so how the engine runs
// it. (Not a schema.GroupKind.)
type GroupType string

// The kinds of groups. Policies of different kinds never share a group.
const (
	GroupValidating GroupType = "validating" // label rules and CEL expressions
	GroupMutating   GroupType = "mutating"   // labels, annotations and CEL patches
	GroupInjection  GroupType = "injection"  // containers, volumes, ... into Pods
	GroupVAP        GroupType = "vap"        // ValidatingAdmissionPolicies: one per group, several on a shared binding webhook
	GroupMAP        GroupType = "map"        // one MutatingAdmissionPolicy, alone in its group
	GroupGatekeeper GroupType = "gatekeeper" // every Gatekeeper Constraint of the set: one webhook, as Gatekeeper's
	GroupImages     GroupType = "images"     // image signatures: a webhook of their own, so a slow registry delays no other policy
)

// Action is the webhook a group of this kind is registered as.
func (k GroupType) Action() Action {
	if k == GroupMutating || k == GroupInjection || k == GroupMAP {
		return ActionMutate
	}
	return ActionValidate
}

// kindOf is the kind of group p belongs in.
func kindOf(p *Policy) GroupType {
	switch {
	case p.VAP != nil:
		return GroupVAP
	case p.MAP != nil:
		return GroupMAP
	case p.Gatekeeper != nil:
		return GroupGatekeeper
	case p.IsInjection():
		return GroupInjection
	case p.Spec.VerifyImages != nil:
		return GroupImages
	case p.IsMutation():
		return GroupMutating
	default:
		return GroupValidating
	}
}

// Group is a set of policies with the same kind, match and failure policy.
// It becomes one webhook entry, so the apiserver calls tollgate once per
// distinct selector rather than once per policy, and one path on the server.
type Group struct {
	// ID is the name of the group's first policy; it names the path and the webhook.
	ID   string
	Kind GroupType
	// Action is Kind.Action(): which webhook configuration the group is in.
	Action        Action
	Match         Match
	FailurePolicy FailurePolicy
	Policies      []*Policy
	// BindingWebhooks are a ValidatingAdmissionPolicy's or a
	// MutatingAdmissionPolicy's webhook entries, one per distinct selectors
	// of its bindings (bindingwebhook.go). An entry of a
	// ValidatingAdmissionPolicy may serve later policies too, and theirs
	// then have none (sharedwebhooks.go). The group's own path is
	// registered with the apiserver for no such policy.
	BindingWebhooks []*BindingWebhook
	// webhookName, when set, names the group's webhook instead of its ID.
	webhookName string
}

// Path is where the server answers for this group, e.g. /validate/require-environment.
func (g *Group) Path() string { return "/" + string(g.Action) + "/" + g.ID }

// WebhookName is the fully qualified name of the group's webhook entry.
func (g *Group) WebhookName() string {
	if g.webhookName != "" {
		return g.webhookName
	}
	return g.ID + "." + string(g.Action) + ".tollgate.dev"
}

func groupPolicies(policies []*Policy) []*Group {
	var groups []*Group
	byKey := map[string]*Group{}
	for _, p := range policies {
		kind := kindOf(p)
		key := groupKey(kind, p)
		g, ok := byKey[key]
		if !ok {
			g = &Group{ID: p.Name(), Kind: kind, Action: kind.Action(), Match: p.Spec.Match, FailurePolicy: p.Spec.FailurePolicy}
			switch kind {
			case GroupVAP:
				g.BindingWebhooks = vapBindings.webhooks(p)
			case GroupMAP:
				g.BindingWebhooks = mapBindings.webhooks(p)
			}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.Policies = append(g.Policies, p)
	}
	for _, g := range groups {
		if g.Kind == GroupGatekeeper {
			g.ID, g.Match = GatekeeperGroupID, gatekeeperMatch(g.Policies)
		}
	}
	// MutatingAdmissionPolicies come first, as in the apiserver, whose
	// policy plugin runs before every mutating webhook.
	slices.SortStableFunc(groups, func(a, b *Group) int {
		return compareBool(b.Kind == GroupMAP, a.Kind == GroupMAP)
	})
	return groups
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// groupKey is equal for policies that can share a webhook entry. Lists are
// compared as sets: [CREATE, UPDATE] and [UPDATE, CREATE] are the same match.
func groupKey(kind GroupType, p *Policy) string {
	if kind == GroupVAP {
		return "vap:" + p.Name() // a ValidatingAdmissionPolicy has a webhook of its own
	}
	if kind == GroupMAP {
		return "map:" + p.Name() // so has a MutatingAdmissionPolicy
	}
	if kind == GroupGatekeeper {
		return "gatekeeper" // one webhook for every Constraint
	}
	m := p.Spec.Match
	m.Resources = sortedCopy(m.Resources)
	m.Operations = sortedCopy(m.Operations)
	m.ExcludeNamespaces = sortedCopy(m.ExcludeNamespaces)
	// Injection and other mutations never share a webhook: the engine runs
	// them differently.
	b, _ := json.Marshal(struct {
		K GroupType
		M Match
		F FailurePolicy
	}{kind, m, p.Spec.FailurePolicy})
	return string(b)
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}
