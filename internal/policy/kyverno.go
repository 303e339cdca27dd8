package policy

// Kyverno's ValidatingPolicy and NamespacedValidatingPolicy, read and
// compiled by package kyverno, as policies of the set.

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
	"github.com/tollgate-dev/tollgate/internal/kyverno"
	"github.com/tollgate-dev/tollgate/internal/references"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// decodeKyverno reads a Kyverno policy (kyverno.Decode) as a
// ValidatingAdmissionPolicy with its binding inline, and its autogen
// policies.
func decodeKyverno(kind, version string, js []byte) (*Policy, field.ErrorList) {
	k, errs := kyverno.Decode(kind, version, js)
	if len(errs) > 0 {
		if k == nil {
			return nil, errs
		}
		return &Policy{Metadata: Metadata{Name: k.Name}}, errs
	}
	vap := func(v kyverno.Variant) *validatingpolicy.Policy {
		return &validatingpolicy.Policy{Policy: v.VAP, Bindings: []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{v.Binding}, Validator: v.Validator,
			Kyverno: k.Info, KyvernoCompiled: v.Compiled}
	}
	main := vap(k.Main)
	for _, a := range k.Autogen {
		main.Autogen = append(main.Autogen, vap(a))
	}
	return &Policy{
		Metadata: Metadata{Name: k.Name, Labels: k.Labels, Annotations: k.Annotations},
		Spec:     Spec{FailurePolicy: failurePolicyOf(*k.Main.VAP.Spec.FailurePolicy)},
		VAP:      main,
		compiled: compiled{references: k.References},
	}, nil
}

// KyvernoNotes says, for each Kyverno policy of the set, what Kyverno's
// autogen made of it (the Pod controllers it also checks and its rewritten
// validations) and the kinds it reads through resource.Get/List; for lint.
func (s *Set) KyvernoNotes() []string {
	var out []string
	for _, p := range s.Policies {
		if p.VAP == nil || p.VAP.Kyverno == nil {
			continue
		}
		k := p.VAP.Kyverno
		head := fmt.Sprintf("%s: %s %q", p.Source, k.Kind, p.Name())
		if refs := p.References(); len(refs) > 0 {
			kinds := make([]string, len(refs))
			for i, c := range refs {
				kinds[i] = references.KindName(c.GVK)
			}
			out = append(out, fmt.Sprintf("%s: reads %s through resource.Get/List: a server lists and watches them (grant get, list and watch on them: chart value references.resources); offline, give them with --references", head, strings.Join(kinds, ", ")))
		}
		if len(p.VAP.Autogen) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s: autogen: also checks the Pod templates of %s", head, strings.Join(k.AutogenControllers(), ", ")))
		for _, a := range p.VAP.Autogen {
			var rs []string
			for _, r := range a.Policy.Spec.MatchConstraints.ResourceRules {
				rs = append(rs, r.Resources...)
			}
			orig, gen := p.VAP.Policy.Spec, a.Policy.Spec
			note := func(what, before, after string) {
				if before != after {
					// as the user wrote it: params is Kyverno's exceptions
					after = analysis.RenameIdent(after, "params", kyverno.ExceptionsVariable)
					out = append(out, fmt.Sprintf("%s: autogen (%s): %s: %s", head, strings.Join(rs, ", "), what, strings.TrimSpace(after)))
				}
			}
			for i, c := range gen.MatchConditions {
				note(fmt.Sprintf("matchConditions[%d]", i), orig.MatchConditions[i].Expression, c.Expression)
			}
			for i, v := range gen.Variables {
				note(fmt.Sprintf("variables[%d] (%s)", i, v.Name), orig.Variables[i].Expression, v.Expression)
			}
			for i, v := range gen.Validations {
				note(fmt.Sprintf("validations[%d]", i), orig.Validations[i].Expression, v.Expression)
			}
		}
	}
	return out
}
