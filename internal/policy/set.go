package policy

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/internal/exception"
)

// Set is a verified collection of policies and the webhook groups they form.
type Set struct {
	Policies []*Policy
	Groups   []*Group
	// Objects are the documents of other API groups found with the
	// policies (params, RBAC objects); see ParseAll.
	Objects []*unstructured.Unstructured
	// Exceptions are the PolicyExceptions read with the policies, in load order.
	Exceptions []*exception.Exception
}

// NewSet verifies what no single policy can: names are unique, and no two
// injection policies add a container (or init container) or volume of the
// same name. The policies are grouped into webhook entries.
func NewSet(policies []*Policy) (*Set, error) {
	policies, errs := attachBindings(policies, vapBindings)
	policies, mapErrs := attachBindings(policies, mapBindings)
	errs = append(errs, mapErrs...)
	policies, gkErrs := attachGatekeeper(policies)
	errs = append(errs, gkErrs...)
	byName := map[string]*Policy{}
	containers := map[string]*Policy{}
	volumes := map[string]*Policy{}
	for _, p := range policies {
		if prev, ok := byName[p.Name()]; ok {
			errs = append(errs, fmt.Errorf("%s: metadata.name: duplicate policy name %q, first defined in %s", p.Source, p.Name(), prev.Source))
			continue
		}
		byName[p.Name()] = p
		in := p.Injection()
		if in == nil {
			continue
		}
		for _, list := range []struct {
			field string
			items []Item
			owner map[string]*Policy
		}{
			{"spec.inject.initContainers", in.InitContainers, containers},
			{"spec.inject.containers", in.Containers, containers},
			{"spec.inject.volumes", in.Volumes, volumes},
		} {
			for i, item := range list.items {
				if prev, ok := list.owner[item.Name]; ok && prev != p {
					errs = append(errs, fmt.Errorf("%s: policy %q: %s[%d].name: %q is also injected by policy %q (%s)",
						p.Source, p.Name(), list.field, i, item.Name, prev.Name(), prev.Source))
				}
				list.owner[item.Name] = p
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	groups := groupPolicies(policies)
	shareWebhooks(groups)
	return &Set{Policies: policies, Groups: groups}, nil
}

// Names returns the policy names, in load order.
func (s *Set) Names() []string {
	names := make([]string, len(s.Policies))
	for i, p := range s.Policies {
		names[i] = p.Name()
	}
	return names
}

// Group finds a group by its path segment.
func (s *Set) Group(id string) *Group {
	for _, g := range s.Groups {
		if g.ID == id {
			return g
		}
	}
	return nil
}
