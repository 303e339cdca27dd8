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

// VAPWebhook is one webhook entry of a ValidatingAdmissionPolicy: the
// bindings whose selectors are the same. The entry carries those selectors,
// ANDed with the policy's, so that the apiserver applies them before it
// calls tollgate, which then needs no namespace labels to apply them.
type VAPWebhook struct {
	// NamespaceSelector and ObjectSelector are the policy's matchConstraints
	// selectors and the bindings' matchResources selectors, combined.
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
	// Group answers on the entry's path, /validate/<policy>/<first binding>:
	// the policy with these bindings only, and without the selectors the
	// apiserver has already applied. Its webhook is named
	// <first binding>.binding.vap.tollgate.dev.
	Group *Group
}

// webhookSuffix ends the name of every binding's webhook entry.
const webhookSuffix = ".binding.vap.tollgate.dev"

// vapWebhooks splits a ValidatingAdmissionPolicy's bindings by their
// selectors, in load order: one webhook entry per distinct pair of
// namespaceSelector and objectSelector. A policy without bindings has none:
// it never applies.
func vapWebhooks(p *Policy) []*VAPWebhook {
	var out []*VAPWebhook
	byKey := map[string]int{}
	var bindings [][]*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, b := range p.VAP.Bindings {
		ns, obj := bindingSelectors(b)
		k, _ := json.Marshal([]*metav1.LabelSelector{ns, obj})
		i, ok := byKey[string(k)]
		if !ok {
			i = len(out)
			byKey[string(k)] = i
			mc := p.VAP.Policy.Spec.MatchConstraints
			out = append(out, &VAPWebhook{
				NamespaceSelector: AndSelectors(mc.NamespaceSelector, ns),
				ObjectSelector:    AndSelectors(mc.ObjectSelector, obj),
			})
			bindings = append(bindings, nil)
		}
		bindings[i] = append(bindings[i], b)
	}
	for i, w := range out {
		served := *p
		served.VAP = p.VAP.selected(bindings[i])
		first := bindings[i][0].Name
		w.Group = &Group{
			ID:            p.Name() + "/" + first,
			Kind:          GroupVAP,
			Action:        ActionValidate,
			FailurePolicy: p.Spec.FailurePolicy,
			Policies:      []*Policy{&served},
			webhookName:   bindingWebhookName(first),
		}
	}
	return out
}

func bindingSelectors(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) (ns, obj *metav1.LabelSelector) {
	if m := b.Spec.MatchResources; m != nil {
		return m.NamespaceSelector, m.ObjectSelector
	}
	return nil, nil
}

// selected is the policy with only the given bindings, whose selectors, as
// the policy's, the apiserver has applied: they select everything here.
func (v *VAP) selected(bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) *VAP {
	out := *v
	out.Policy = v.Policy.DeepCopy()
	if mc := out.Policy.Spec.MatchConstraints; mc != nil {
		mc.NamespaceSelector, mc.ObjectSelector = &metav1.LabelSelector{}, &metav1.LabelSelector{}
	}
	out.Bindings = make([]*admissionregistrationv1.ValidatingAdmissionPolicyBinding, len(bindings))
	for i, b := range bindings {
		c := b.DeepCopy()
		if m := c.Spec.MatchResources; m != nil {
			m.NamespaceSelector, m.ObjectSelector = &metav1.LabelSelector{}, &metav1.LabelSelector{}
		}
		out.Bindings[i] = c
	}
	return &out
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
func bindingWebhookName(binding string) string {
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
