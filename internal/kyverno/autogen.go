package kyverno

// Kyverno's autogen for ValidatingPolicies: a policy on Pods alone also
// checks the Pod templates of Pod controllers, with its expressions
// rewritten, as Kyverno does it
// (pkg/cel/policies/vpol/autogen/autogen.go and pkg/cel/autogen/).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// autogenTarget is a Pod controller autogen writes rules for, and which of
// Kyverno's replacements (autogenDefaults, autogenCronJobs) rewrites its
// expressions (pkg/cel/autogen/data.go).
type autogenTarget struct {
	group, version, resource, replacements string
}

const (
	autogenDefaults = "defaults"
	autogenCronJobs = "cronjobs"
)

var autogenTargets = map[string]autogenTarget{
	"daemonsets":   {"apps", "v1", "daemonsets", autogenDefaults},
	"deployments":  {"apps", "v1", "deployments", autogenDefaults},
	"replicasets":  {"apps", "v1", "replicasets", autogenDefaults},
	"statefulsets": {"apps", "v1", "statefulsets", autogenDefaults},
	"jobs":         {"batch", "v1", "jobs", autogenDefaults},
	"cronjobs":     {"batch", "v1", "cronjobs", autogenCronJobs},
}

// autogenReplacements rewrite object.<from> and oldObject.<from> to <to>
// in the whole spec's JSON, but where .namespace follows.
var autogenReplacements = map[string][][2]string{
	autogenDefaults: {{"spec", "spec.template.spec"}, {"metadata", "spec.template.metadata"}},
	autogenCronJobs: {{"spec", "spec.jobTemplate.spec.template.spec"}, {"metadata", "spec.jobTemplate.spec.template.metadata"}},
}

// canAutogen is Kyverno's CanAutoGen (pkg/cel/autogen/support.go): one
// rule, of pods in the core group v1, without resource names, exclusions
// or an object selector.
func canAutogen(m *admissionregistrationv1.MatchResources) bool {
	if m == nil || len(m.ExcludeResourceRules) != 0 || len(m.ResourceRules) != 1 {
		return false
	}
	if s := m.ObjectSelector; s != nil && (len(s.MatchLabels) > 0 || len(s.MatchExpressions) > 0) {
		return false
	}
	r := m.ResourceRules[0]
	return len(r.ResourceNames) == 0 && slices.Equal(r.APIGroups, []string{""}) && slices.Equal(r.APIVersions, []string{"v1"}) &&
		slices.Equal(r.Resources, []string{"pods"})
}

// AutogenControllers are the resources of the Pod controllers whose
// templates a Kyverno policy also checks, sorted; none when it does not
// qualify for autogen.
func (k *Info) AutogenControllers() []string { return k.controllers }

// autogen returns the policies autogen derives from k, one per set
// of replacements (Pod templates; CronJob job templates), compiled, in
// Kyverno's order (cronjobs, defaults).
func autogen(k *object, kind string, actions []admissionregistrationv1.ValidationAction, info *Info) ([]Variant, field.ErrorList) {
	s := k.Spec
	if !canAutogen(s.MatchConstraints) || len(s.MatchConstraints.ResourceRules[0].Operations) == 0 {
		return nil, nil // without operations, Kyverno's CreateMatchConstraints gives no constraints: nothing matched
	}
	controllers := make([]string, 0, len(autogenTargets))
	for c := range autogenTargets {
		controllers = append(controllers, c)
	}
	if s.Autogen != nil && s.Autogen.PodControllers != nil && s.Autogen.PodControllers.Controllers != nil {
		controllers = s.Autogen.PodControllers.Controllers
	}
	byReplacements := map[string][]autogenTarget{}
	for _, c := range controllers {
		if t, ok := autogenTargets[c]; ok && !slices.Contains(info.controllers, c) {
			byReplacements[t.replacements] = append(byReplacements[t.replacements], t)
			info.controllers = append(info.controllers, c)
		}
	}
	slices.Sort(info.controllers)
	ops := s.MatchConstraints.ResourceRules[0].Operations
	var out []Variant
	for _, ref := range []string{autogenCronJobs, autogenDefaults} {
		targets := byReplacements[ref]
		if len(targets) == 0 {
			continue
		}
		js, err := json.Marshal(s)
		if err != nil {
			return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
		}
		for _, r := range autogenReplacements[ref] {
			js = replaceUnprotected(js, "object."+r[0], "object."+r[1])
			js = replaceUnprotected(js, "oldObject."+r[0], "oldObject."+r[1])
		}
		gen := *k
		gen.Spec = spec{}
		if err := json.Unmarshal(js, &gen.Spec); err != nil {
			return nil, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
		}
		gen.Spec.MatchConstraints = autogenMatch(targets, ops, s.MatchConstraints.NamespaceSelector)
		v, errs := variant(&gen, kind, actions, info.resources)
		for _, e := range errs {
			e.Detail = fmt.Sprintf("in the rule autogen writes for %s: %s", ref, e.Detail)
		}
		if len(errs) > 0 {
			return nil, errs
		}
		out = append(out, v)
	}
	return out, nil
}

// autogenMatch is Kyverno's CreateMatchConstraints: one rule per group and
// version, the operations of the policy's rule, its namespaceSelector.
func autogenMatch(targets []autogenTarget, ops []admissionregistrationv1.OperationType, ns *metav1.LabelSelector) *admissionregistrationv1.MatchResources {
	byGV := map[[2]string][]string{}
	for _, t := range targets {
		gv := [2]string{t.group, t.version}
		if !slices.Contains(byGV[gv], t.resource) {
			byGV[gv] = append(byGV[gv], t.resource)
		}
	}
	gvs := make([][2]string, 0, len(byGV))
	for gv := range byGV {
		gvs = append(gvs, gv)
	}
	slices.SortFunc(gvs, func(a, b [2]string) int { return slices.Compare(a[:], b[:]) })
	m := &admissionregistrationv1.MatchResources{NamespaceSelector: ns.DeepCopy()}
	for _, gv := range gvs {
		resources := byGV[gv]
		slices.Sort(resources)
		m.ResourceRules = append(m.ResourceRules, admissionregistrationv1.NamedRuleWithOperations{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{gv[0]}, APIVersions: []string{gv[1]}, Resources: resources},
				Operations: slices.Clone(ops),
			},
		})
	}
	return m
}

// replaceUnprotected is Kyverno's replace (pkg/cel/autogen/replacement.go):
// every from becomes to, except where ".namespace" follows as a whole
// segment, so that object.metadata.namespace stays the controller's.
func replaceUnprotected(data []byte, from, to string) []byte {
	var buf bytes.Buffer
	for {
		i := bytes.Index(data, []byte(from))
		if i < 0 {
			buf.Write(data)
			return buf.Bytes()
		}
		buf.Write(data[:i])
		rest := data[i+len(from):]
		if protected(rest) {
			buf.WriteString(from)
		} else {
			buf.WriteString(to)
		}
		data = rest
	}
}

func protected(rest []byte) bool {
	const suffix = ".namespace"
	if !bytes.HasPrefix(rest, []byte(suffix)) {
		return false
	}
	next := rest[len(suffix):]
	return len(next) == 0 || !(next[0] == '_' || next[0] >= 'a' && next[0] <= 'z' || next[0] >= 'A' && next[0] <= 'Z' || next[0] >= '0' && next[0] <= '9')
}
