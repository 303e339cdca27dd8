package replay

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/registration"
)

// matcher tells, from an event's reference alone, whether the apiserver
// would have called any webhook of the policies: their rules, as the
// webhook configurations tollgate generates hold them, matched by the
// apiserver's own rule matcher. Selectors are left to the engine.
type matcher struct {
	rules []admissionregistrationv1.RuleWithOperations
	seen  map[matchKey]bool
	// all: some rule matches every resource; else resources lists those
	// some rule names.
	all       bool
	resources map[schema.GroupResource]bool
}

type matchKey struct {
	gvr             schema.GroupVersionResource
	sub             string
	op              admission.Operation
	namespaced, nsr bool
}

func newMatcher(sets ...*policy.Set) (*matcher, error) {
	m := &matcher{seen: map[matchKey]bool{}, resources: map[schema.GroupResource]bool{}}
	for _, set := range sets {
		if set == nil {
			continue
		}
		// Only the rules are read: the address and CA do not change them.
		mut, val, err := registration.Build(set, registration.Options{URL: "https://tollgate.invalid", CABundle: []byte("rules only")})
		if err != nil {
			return nil, fmt.Errorf("the policies' webhook rules: %w", err)
		}
		if mut != nil {
			for _, w := range mut.Webhooks {
				m.rules = append(m.rules, w.Rules...)
			}
		}
		if val != nil {
			for _, w := range val.Webhooks {
				m.rules = append(m.rules, w.Rules...)
			}
		}
	}
	for _, r := range m.rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				name, _, _ := cutSub(res)
				if g == "*" || name == "*" {
					m.all = true
				}
				m.resources[schema.GroupResource{Group: g, Resource: name}] = true
			}
		}
	}
	return m, nil
}

func cutSub(res string) (string, string, bool) {
	for i := range len(res) {
		if res[i] == '/' {
			return res[:i], res[i+1:], true
		}
	}
	return res, "", false
}

// any: some rule matches the event's resource, subresource, operation and scope.
func (m *matcher) any(ev *auditv1.Event, op admission.Operation) bool {
	ref := ev.ObjectRef
	k := matchKey{
		gvr: schema.GroupVersionResource{Group: ref.APIGroup, Version: ref.APIVersion, Resource: ref.Resource},
		sub: ref.Subresource, op: op, namespaced: ref.Namespace != "",
		nsr: ref.APIGroup == "" && ref.Resource == "namespaces",
	}
	if v, ok := m.seen[k]; ok {
		return v
	}
	ns := ref.Namespace
	if k.nsr {
		ns = ref.Name
	}
	attr := apiadmission.NewAttributesRecord(nil, nil, schema.GroupVersionKind{}, ns, ref.Name, k.gvr, k.sub, apiadmission.Operation(op), nil, false, nil)
	found := false
	for _, r := range m.rules {
		if (&rules.Matcher{Rule: r, Attr: attr}).Matches() {
			found = true
			break
		}
	}
	m.seen[k] = found
	return found
}

// keeps: some rule could see objects of the resource, so the store keeps
// them for the oldObject of later requests.
func (m *matcher) keeps(gr schema.GroupResource) bool {
	return m.all || m.resources[gr]
}
