package policy

// The cluster's own ValidatingAdmissionPolicies (those the apiserver
// enforces), read as policies of a set beside tollgate's config, for the
// background audit and `tollgate audit --cluster-policies`.

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Origins of a policy, as reports name them (the property "origin").
const (
	OriginConfig  = "config"
	OriginCluster = "cluster"
)

// Origin is where the policy came from: tollgate's config (files, the
// embedded defaults) or the cluster's API.
func (p *Policy) Origin() string {
	if p.Source.Cluster {
		return OriginCluster
	}
	return OriginConfig
}

// ClusterVAPs turns the cluster's ValidatingAdmissionPolicy and
// ValidatingAdmissionPolicyBinding objects, as the apiserver stores them,
// into policies: each VAP with the bindings naming it, in name order. Each
// is decoded and compiled as a VAP of tollgate's config is (the same
// defaults, the same compiler); one that cannot be is left out, with an
// error naming it. A binding naming no VAP of the cluster binds nothing,
// as in the apiserver, and is left out silently.
func ClusterVAPs(vaps, bindings []*unstructured.Unstructured) ([]*Policy, []error) {
	var out []*Policy
	var errs []error
	byName := map[string]*Policy{}
	for _, u := range sortedByName(vaps) {
		p, err := clusterObject("ValidatingAdmissionPolicy", u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		byName[p.Name()] = p
		out = append(out, p)
	}
	for _, u := range sortedByName(bindings) {
		b, err := clusterObject("ValidatingAdmissionPolicyBinding", u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if target, ok := byName[b.binding.Spec.PolicyName]; ok {
			vapBindings.attach(target, b)
		}
	}
	return out, errs
}

// clusterObject decodes one stored VAP or binding.
func clusterObject(kind string, u *unstructured.Unstructured) (*Policy, error) {
	c := u.DeepCopy()
	c.SetAPIVersion(admissionRegistrationV1)
	c.SetKind(kind)
	js, err := c.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%s %q in the cluster: %w", kind, u.GetName(), err)
	}
	p, errList := decodeVAP(kind, js)
	if len(errList) > 0 {
		return nil, fmt.Errorf("%s %q in the cluster: %w", kind, u.GetName(), errList.ToAggregate())
	}
	p.Source = Source{Cluster: true}
	return p, nil
}

func sortedByName(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := slices.Clone(objs)
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

// WithCluster returns a set of the set's policies and the cluster's VAPs
// (ClusterVAPs), the set's first. A cluster VAP named as a policy of the
// set is left out, and named in shadowed: tollgate's config wins, so no
// object is ever judged twice under one name. The set is not changed.
func (s *Set) WithCluster(cluster []*Policy) (merged *Set, shadowed []string) {
	own := map[string]bool{}
	for _, p := range s.Policies {
		own[p.Name()] = true
	}
	all := slices.Clone(s.Policies)
	for _, p := range cluster {
		if own[p.Name()] {
			shadowed = append(shadowed, p.Name())
			continue
		}
		all = append(all, p)
	}
	return &Set{Policies: all, Groups: groupPolicies(all), Objects: s.Objects, Exceptions: s.Exceptions}, shadowed
}
