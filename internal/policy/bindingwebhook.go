package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BindingWebhook is one webhook entry of a ValidatingAdmissionPolicy or a
// MutatingAdmissionPolicy: the bindings whose selectors are the same. The
// entry carries those selectors, ANDed with the policy's, so that the
// apiserver applies them before it calls tollgate, which then needs no
// namespace labels to apply them.
type BindingWebhook struct {
	// NamespaceSelector and ObjectSelector are the policy's matchConstraints
	// selectors and the bindings' matchResources selectors, combined.
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
	// Group answers on the entry's path, /validate/<policy>/<first binding>
	// (/mutate/ for a MutatingAdmissionPolicy): the policy with these
	// bindings only, and without the selectors the apiserver has already
	// applied; then the later ValidatingAdmissionPolicies that share the
	// entry (sharedwebhooks.go), likewise. Its webhook is named <first
	// binding>.binding.vap.tollgate.dev (.binding.map. for a
	// MutatingAdmissionPolicy).
	Group *Group
}

// namedBinding is what bindingWebhooks reads of a binding of either kind
// but its matchResources.
type namedBinding interface {
	GetName() string
}

// bindingWebhooks splits a policy's bindings by their selectors, in load
// order: one webhook entry per distinct pair of namespaceSelector and
// objectSelector. A policy without bindings has none: it never applies.
// mc is the policy's matchConstraints, match reads a binding's
// matchResources, and serve makes a copy of p the policy served on an
// entry's path, with the entry's bindings.
func bindingWebhooks[B namedBinding](p *Policy, kind GroupType, mc *admissionregistrationv1.MatchResources, bindings []B,
	match func(B) *admissionregistrationv1.MatchResources, serve func(served *Policy, bindings []B)) []*BindingWebhook {
	var out []*BindingWebhook
	byKey := map[string]int{}
	var split [][]B
	for _, b := range bindings {
		var ns, obj *metav1.LabelSelector
		if m := match(b); m != nil {
			ns, obj = m.NamespaceSelector, m.ObjectSelector
		}
		k, _ := json.Marshal([]*metav1.LabelSelector{ns, obj})
		i, ok := byKey[string(k)]
		if !ok {
			i = len(out)
			byKey[string(k)] = i
			out = append(out, &BindingWebhook{
				NamespaceSelector: AndSelectors(mc.NamespaceSelector, ns),
				ObjectSelector:    AndSelectors(mc.ObjectSelector, obj),
			})
			split = append(split, nil)
		}
		split[i] = append(split[i], b)
	}
	for i, w := range out {
		first := split[i][0].GetName()
		served := *p
		serve(&served, split[i])
		w.Group = &Group{
			ID:            p.Name() + "/" + first,
			Kind:          kind,
			Action:        kind.Action(),
			FailurePolicy: p.Spec.FailurePolicy,
			Policies:      []*Policy{&served},
			webhookName:   bindingWebhookName(first, kind),
		}
	}
	return out
}

// withoutSelectors copies bindings, with selectors that select everything:
// on a binding's path the apiserver has applied them.
func withoutSelectors[B interface{ DeepCopy() B }](bindings []B, match func(B) *admissionregistrationv1.MatchResources) []B {
	out := make([]B, len(bindings))
	for i, b := range bindings {
		out[i] = b.DeepCopy()
		clearSelectors(match(out[i]))
	}
	return out
}

// clearSelectors makes m's selectors select everything.
func clearSelectors(m *admissionregistrationv1.MatchResources) {
	if m != nil {
		m.NamespaceSelector, m.ObjectSelector = &metav1.LabelSelector{}, &metav1.LabelSelector{}
	}
}

// AndSelectors is one label selector that matches exactly what both match
// (a webhook entry has one selector of each kind). A label both require
// with different values becomes two In requirements, which no object meets,
// as none meets both selectors.
func AndSelectors(a, b *metav1.LabelSelector) *metav1.LabelSelector {
	out := &metav1.LabelSelector{}
	for _, s := range []*metav1.LabelSelector{a, b} {
		if s == nil {
			continue
		}
		for _, k := range sortedKeys(s.MatchLabels) {
			v := s.MatchLabels[k]
			prev, ok := out.MatchLabels[k]
			switch {
			case !ok:
				if out.MatchLabels == nil {
					out.MatchLabels = map[string]string{}
				}
				out.MatchLabels[k] = v
			case prev != v:
				out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
			}
		}
		for _, r := range s.MatchExpressions {
			out.MatchExpressions = append(out.MatchExpressions, *r.DeepCopy())
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	return sortedCopy(keys)
}

// bindingWebhookName names a binding's webhook entry, shortened with a hash
// of the binding's name when the whole would be longer than the apiserver
// allows (253 characters, 63 per label).
func bindingWebhookName(binding string, kind GroupType) string {
	webhookSuffix := ".binding." + string(kind) + ".tollgate.dev"
	long := len(binding)+len(webhookSuffix) > 253
	for _, label := range strings.Split(binding, ".") {
		long = long || len(label) > 63
	}
	if !long {
		return binding + webhookSuffix
	}
	sum := sha256.Sum256([]byte(binding))
	short := strings.Trim(binding[:min(len(binding), 40)], ".-")
	return strings.ReplaceAll(short, ".", "-") + "-" + hex.EncodeToString(sum[:4]) + webhookSuffix
}
