// Package native compiles loaded policies into what the apiserver enforces
// by itself, with no webhook: ValidatingAdmissionPolicies and
// MutatingAdmissionPolicies with their bindings. Kubernetes' own policies
// are kept as they are; tollgate's validate policies are compiled
// (validate.go). Every other policy stays on the webhook, and Output says
// why.
package native

import (
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

// Labels on every object Compile returns: who manages it, and the policy
// it enforces.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "tollgate"
	PolicyLabel    = "tollgate.dev/policy"
)

// Options are what the webhook configurations also take from a replica.
type Options struct {
	// ExcludedNamespaces are left out of every compiled binding, as they
	// are out of every webhook (engine.Excluded).
	ExcludedNamespaces []string
}

// Output is the native form of a set of policies.
type Output struct {
	Validating        []*admissionregistrationv1.ValidatingAdmissionPolicy
	ValidatingBinding []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	Mutating          []*admissionregistrationv1.MutatingAdmissionPolicy
	MutatingBinding   []*admissionregistrationv1.MutatingAdmissionPolicyBinding
	// Native names the policies the objects enforce, in load order.
	Native []string
	// Webhook are the policies that stay on the webhook, in load order.
	Webhook []Kept
}

// Kept is a policy that stays on the webhook, and why.
type Kept struct {
	Policy string
	Reason string
}

// Compile returns the native form of the set's policies. It fails only
// when a generated object cannot be encoded; a policy that cannot be
// expressed is kept on the webhook instead.
func Compile(set *policy.Set, o Options) (*Output, error) {
	exempted := exemptedPolicies(set)
	out := &Output{}
	for _, p := range set.Policies {
		if p.Source.Cluster {
			continue // the apiserver already enforces it
		}
		if reason := keptReason(p, exempted); reason != "" {
			out.Webhook = append(out.Webhook, Kept{Policy: p.Name(), Reason: reason})
			continue
		}
		var err error
		switch {
		case p.VAP != nil:
			out.addVAP(p.Name(), p.VAP.Policy, p.VAP.Bindings)
		case p.MAP != nil:
			out.addMAP(p.Name(), p.MAP.Policy, p.MAP.Bindings)
		default:
			err = out.addValidate(p, &o)
		}
		if err != nil {
			out.Webhook = append(out.Webhook, Kept{Policy: p.Name(), Reason: err.Error()})
			continue
		}
		out.Native = append(out.Native, p.Name())
	}
	return out, nil
}

// keptReason says why p cannot be compiled, "" when it can.
func keptReason(p *policy.Policy, exempted map[string]string) string {
	if e, ok := exempted[p.Name()]; ok {
		return e + " exempts objects from it, and exceptions are applied by the webhook"
	}
	switch {
	case p.VAP != nil && p.VAP.Kyverno != nil:
		return "a Kyverno ValidatingPolicy: its libraries, exceptions and words are Kyverno's, which the apiserver does not have"
	case p.Gatekeeper != nil:
		return "a Gatekeeper Constraint: decided by Gatekeeper's evaluator"
	case p.IsInjection():
		return "injection is not compiled to MutatingAdmissionPolicies yet"
	case p.IsMutation():
		return "mutation is not compiled to MutatingAdmissionPolicies yet"
	case p.Spec.VerifyImages != nil:
		return "verifies image signatures, which needs registries"
	case len(p.Spec.References) > 0:
		return "reads other objects (spec.references), which the apiserver's CEL cannot"
	case p.VAP == nil && p.MAP == nil && p.Spec.Validate == nil:
		return "nothing to enforce natively"
	}
	return ""
}

// exemptedPolicies are the policies some exception names, each with the
// first exception naming it.
func exemptedPolicies(set *policy.Set) map[string]string {
	out := map[string]string{}
	for _, e := range set.Exceptions {
		for _, name := range e.Spec.Policies {
			if _, ok := out[name]; !ok {
				out[name] = e.String()
			}
		}
	}
	return out
}

// addVAP keeps a ValidatingAdmissionPolicy and its bindings as they are,
// labelled.
func (out *Output) addVAP(name string, vap *admissionregistrationv1.ValidatingAdmissionPolicy, bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	v := vap.DeepCopy()
	v.TypeMeta = metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"}
	v.ObjectMeta = own(v.ObjectMeta, name)
	v.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{}
	out.Validating = append(out.Validating, v)
	for _, b := range bindings {
		c := b.DeepCopy()
		c.TypeMeta = metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"}
		c.ObjectMeta = own(c.ObjectMeta, name)
		out.ValidatingBinding = append(out.ValidatingBinding, c)
	}
}

// addMAP keeps a MutatingAdmissionPolicy and its bindings as they are,
// labelled.
func (out *Output) addMAP(name string, m *admissionregistrationv1.MutatingAdmissionPolicy, bindings []*admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	v := m.DeepCopy()
	v.TypeMeta = metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicy"}
	v.ObjectMeta = own(v.ObjectMeta, name)
	out.Mutating = append(out.Mutating, v)
	for _, b := range bindings {
		c := b.DeepCopy()
		c.TypeMeta = metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicyBinding"}
		c.ObjectMeta = own(c.ObjectMeta, name)
		out.MutatingBinding = append(out.MutatingBinding, c)
	}
}

// own is m as a new object's metadata: its name, labels and annotations,
// with tollgate's labels added.
func own(m metav1.ObjectMeta, policy string) metav1.ObjectMeta {
	labels := map[string]string{}
	for k, v := range m.Labels {
		labels[k] = v
	}
	labels[ManagedByLabel], labels[PolicyLabel] = ManagedBy, policy
	return metav1.ObjectMeta{Name: m.Name, Labels: labels, Annotations: m.Annotations}
}

// check holds a compiled policy and binding to the apiserver's checks and
// compiler, as tollgate reads ValidatingAdmissionPolicies: nothing is
// returned that the apiserver would refuse to store or to compile.
func check(vap *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) error {
	for _, obj := range []any{vap, b} {
		js, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		kind, _ := validatingpolicy.Identify(js)
		if _, _, _, errs := validatingpolicy.Decode(kind, js); len(errs) > 0 {
			return fmt.Errorf("the compiled %s is not one the apiserver accepts: %w", kind, errs.ToAggregate())
		}
	}
	return nil
}

// Objects are the output's objects in the order to apply them: each
// policy, then its bindings.
func (out *Output) Objects() []any {
	var objs []any
	for _, v := range out.Validating {
		objs = append(objs, v)
		for _, b := range out.ValidatingBinding {
			if b.Spec.PolicyName == v.Name {
				objs = append(objs, b)
			}
		}
	}
	for _, m := range out.Mutating {
		objs = append(objs, m)
		for _, b := range out.MutatingBinding {
			if b.Spec.PolicyName == m.Name {
				objs = append(objs, b)
			}
		}
	}
	return objs
}
