// Package registration generates the webhook configurations that make the
// apiserver call tollgate: one webhook entry per policy group, whose rules,
// selectors and failure policy come from the policies themselves.
package registration

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// NamespaceNameLabel is set by the apiserver on every namespace to its name.
const NamespaceNameLabel = "kubernetes.io/metadata.name"

// Service addresses tollgate through a Service in the cluster.
type Service struct {
	Name      string
	Namespace string
	Port      int32
}

// Options say where tollgate is and how the apiserver should call it.
type Options struct {
	// Name of both configurations; default "tollgate".
	Name string
	// URL is tollgate's base URL (https://host:port); or Service.
	URL     string
	Service *Service
	// CABundle is the PEM CA that signed tollgate's serving certificate.
	CABundle []byte
	// CAInjectFrom, "namespace/certificate", leaves the caBundle to
	// cert-manager's CA injector instead.
	CAInjectFrom string
	// TimeoutSeconds per call, 1 to 30; default 5.
	TimeoutSeconds int32
	// ExcludedNamespaces are left out of every webhook: the system namespaces,
	// tollgate's own and any the operator excludes.
	ExcludedNamespaces []string
	// FailurePolicy, when set (Fail or Ignore), replaces every policy's own
	// in the generated webhooks: what the apiserver does when tollgate cannot
	// answer. It does not change how a policy treats its own evaluation errors.
	FailurePolicy admissionregistrationv1.FailurePolicyType
}

// failurePolicy is the operator's failure policy if set, else the policy's own.
func (o *Options) failurePolicy(own admissionregistrationv1.FailurePolicyType) admissionregistrationv1.FailurePolicyType {
	if o.FailurePolicy != "" {
		return o.FailurePolicy
	}
	return own
}

func (o *Options) defaults() error {
	switch o.FailurePolicy {
	case "", admissionregistrationv1.Fail, admissionregistrationv1.Ignore:
	default:
		return fmt.Errorf("failure policy %q: want Fail or Ignore", o.FailurePolicy)
	}
	if o.Name == "" {
		o.Name = "tollgate"
	}
	if o.TimeoutSeconds == 0 {
		o.TimeoutSeconds = 5
	}
	if o.TimeoutSeconds < 1 || o.TimeoutSeconds > 30 {
		return fmt.Errorf("timeout %ds: the apiserver allows 1 to 30 seconds", o.TimeoutSeconds)
	}
	switch {
	case o.URL != "" && o.Service != nil:
		return errors.New("give either a URL or a service, not both")
	case o.URL != "":
		u, err := url.Parse(o.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("url %q: want https://HOST[:PORT][/PATH], no query, fragment or user", o.URL)
		}
	case o.Service != nil:
		if o.Service.Name == "" || o.Service.Namespace == "" {
			return errors.New("a service needs a name and a namespace")
		}
		if o.Service.Port == 0 {
			o.Service.Port = 443
		}
	default:
		return errors.New("give tollgate's URL or its service")
	}
	if len(o.CABundle) == 0 && o.CAInjectFrom == "" {
		return errors.New("a CA bundle is required: the apiserver must trust tollgate's certificate")
	}
	return nil
}

// Build returns the configurations for the set's groups; either is nil when
// no group needs it.
func Build(set *policy.Set, opts Options) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	if err := opts.defaults(); err != nil {
		return nil, nil, err
	}
	var mutating *admissionregistrationv1.MutatingWebhookConfiguration
	var validating *admissionregistrationv1.ValidatingWebhookConfiguration
	meta := metav1.ObjectMeta{Name: opts.Name, Labels: map[string]string{"app.kubernetes.io/name": "tollgate"}}
	if opts.CAInjectFrom != "" {
		meta.Annotations = map[string]string{"cert-manager.io/inject-ca-from": opts.CAInjectFrom}
	}
	for _, g := range set.Groups {
		if g.Action == policy.ActionMutate {
			webhooks := mutatingWebhooks(g, &opts)
			if len(webhooks) == 0 {
				continue // a MutatingAdmissionPolicy without bindings
			}
			if mutating == nil {
				mutating = &admissionregistrationv1.MutatingWebhookConfiguration{
					TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
					ObjectMeta: meta,
				}
			}
			mutating.Webhooks = append(mutating.Webhooks, webhooks...)
			continue
		}
		var webhooks []admissionregistrationv1.ValidatingWebhook
		if g.Kind == policy.GroupVAP {
			if k := g.Policies[0].VAP.Kyverno; k != nil && !k.Admission {
				continue // a Kyverno policy with evaluation.admission.enabled false: background only
			}
			def := g.Policies[0].VAP.Policy
			for _, w := range g.BindingWebhooks {
				webhooks = append(webhooks, bindingWebhook(sharedConstraints(w.Group), *def.Spec.FailurePolicy, w, &opts))
			}
		} else {
			webhooks = append(webhooks, validatingWebhook(g, &opts))
		}
		if len(webhooks) == 0 {
			continue // a ValidatingAdmissionPolicy without bindings
		}
		if validating == nil {
			validating = &admissionregistrationv1.ValidatingWebhookConfiguration{
				TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
				ObjectMeta: meta,
			}
		}
		validating.Webhooks = append(validating.Webhooks, webhooks...)
	}
	return mutating, validating, nil
}

// mutatingWebhooks are a mutating group's webhook entries: a tollgate
// group's one, or a MutatingAdmissionPolicy's, one per distinct selectors
// of its bindings (none without bindings).
func mutatingWebhooks(g *policy.Group, o *Options) []admissionregistrationv1.MutatingWebhook {
	if g.Kind != policy.GroupMAP {
		return []admissionregistrationv1.MutatingWebhook{asMutating(validatingWebhook(g, o), reinvocation(g.Kind))}
	}
	var out []admissionregistrationv1.MutatingWebhook
	for _, w := range g.BindingWebhooks {
		out = append(out, mapWebhook(g.Policies[0].MAP.Policy, w, o))
	}
	return out
}

// asMutating is v as a mutating webhook with the given reinvocation policy.
func asMutating(v admissionregistrationv1.ValidatingWebhook, reinvoke admissionregistrationv1.ReinvocationPolicyType) admissionregistrationv1.MutatingWebhook {
	return admissionregistrationv1.MutatingWebhook{
		Name:                    v.Name,
		ClientConfig:            v.ClientConfig,
		Rules:                   v.Rules,
		FailurePolicy:           v.FailurePolicy,
		MatchPolicy:             v.MatchPolicy,
		NamespaceSelector:       v.NamespaceSelector,
		ObjectSelector:          v.ObjectSelector,
		SideEffects:             v.SideEffects,
		TimeoutSeconds:          v.TimeoutSeconds,
		AdmissionReviewVersions: v.AdmissionReviewVersions,
		ReinvocationPolicy:      &reinvoke,
	}
}

func validatingWebhook(g *policy.Group, o *Options) admissionregistrationv1.ValidatingWebhook {
	failure := o.failurePolicy(admissionregistrationv1.FailurePolicyType(g.FailurePolicy))
	match := admissionregistrationv1.Equivalent
	sideEffects := admissionregistrationv1.SideEffectClassNone
	timeout := o.TimeoutSeconds
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    g.WebhookName(),
		ClientConfig:            clientConfig(g.Path(), o),
		Rules:                   Rules(&g.Match),
		FailurePolicy:           &failure,
		MatchPolicy:             &match,
		NamespaceSelector:       NamespaceSelector(&g.Match, o.ExcludedNamespaces),
		ObjectSelector:          ObjectSelector(&g.Match),
		SideEffects:             &sideEffects,
		TimeoutSeconds:          &timeout,
		AdmissionReviewVersions: []string{"v1", "v1beta1"},
	}
}

func clientConfig(path string, o *Options) admissionregistrationv1.WebhookClientConfig {
	cc := admissionregistrationv1.WebhookClientConfig{CABundle: o.CABundle}
	if o.URL != "" {
		u := strings.TrimSuffix(o.URL, "/") + path
		cc.URL = &u
		return cc
	}
	port := o.Service.Port
	cc.Service = &admissionregistrationv1.ServiceReference{Name: o.Service.Name, Namespace: o.Service.Namespace, Path: &path, Port: &port}
	return cc
}

// Rules are the resource rules of the match: every resource it names and
// the Pod controllers with podControllers, each in every version.
func Rules(m *policy.Match) []admissionregistrationv1.RuleWithOperations {
	ops := make([]admissionregistrationv1.OperationType, len(m.Operations))
	for i, op := range m.Operations {
		ops[i] = admissionregistrationv1.OperationType(op)
	}
	scope := admissionregistrationv1.AllScopes
	var out []admissionregistrationv1.RuleWithOperations
	for _, gr := range m.GroupResources() {
		out = append(out, admissionregistrationv1.RuleWithOperations{
			Operations: ops,
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{gr.Group},
				APIVersions: []string{"*"},
				Resources:   []string{gr.Resource},
				Scope:       &scope,
			},
		})
	}
	return out
}

// NamespaceSelector is the policy's selector with the excluded namespaces
// (built-in and the policy's own) added as a NotIn on the namespace name.
func NamespaceSelector(m *policy.Match, excluded []string) *metav1.LabelSelector {
	sel := &metav1.LabelSelector{}
	if m.NamespaceSelector != nil {
		sel = m.NamespaceSelector.DeepCopy()
	}
	names := sets.List(sets.New(excluded...).Insert(m.ExcludeNamespaces...))
	if len(names) > 0 {
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
			Key:      NamespaceNameLabel,
			Operator: metav1.LabelSelectorOpNotIn,
			Values:   names,
		})
	}
	return sel
}

// ObjectSelector is the policy's object selector, empty for none.
func ObjectSelector(m *policy.Match) *metav1.LabelSelector {
	if m.ObjectSelector == nil {
		return &metav1.LabelSelector{}
	}
	return m.ObjectSelector.DeepCopy()
}

// sharedConstraints is the match constraints of the policies a
// ValidatingAdmissionPolicy binding's webhook entry serves: the first's,
// with the resource rules of all (the policies share their matchPolicy and
// selectors; policy.shareWebhooks).
func sharedConstraints(g *policy.Group) *admissionregistrationv1.MatchResources {
	mc := g.Policies[0].VAP.MatchConstraints()
	if len(g.Policies) == 1 {
		return mc
	}
	mc = mc.DeepCopy()
	seen := map[string]bool{}
	mc.ResourceRules = nil
	for _, p := range g.Policies {
		for _, r := range p.VAP.MatchConstraints().ResourceRules {
			k, _ := json.Marshal(r.RuleWithOperations)
			if !seen[string(k)] {
				seen[string(k)] = true
				mc.ResourceRules = append(mc.ResourceRules, r)
			}
		}
	}
	return mc
}

// bindingWebhook covers the bindings of a ValidatingAdmissionPolicy or a
// MutatingAdmissionPolicy that share their selectors: the policy's resource
// rules (mc), match policy and failure policy, and the policy's and
// bindings' selectors combined, so that the apiserver selects namespaces
// and objects whether or not tollgate can see them. Binding resource rules
// and exclusions are applied by the server.
func bindingWebhook(mc *admissionregistrationv1.MatchResources, failurePolicy admissionregistrationv1.FailurePolicyType, w *policy.BindingWebhook, o *Options) admissionregistrationv1.ValidatingWebhook {
	var rules []admissionregistrationv1.RuleWithOperations
	for _, r := range mc.ResourceRules {
		rules = append(rules, *r.RuleWithOperations.DeepCopy())
	}
	sideEffects := admissionregistrationv1.SideEffectClassNone
	timeout := o.TimeoutSeconds
	ns := NamespaceSelector(&policy.Match{NamespaceSelector: w.NamespaceSelector}, o.ExcludedNamespaces)
	failure := o.failurePolicy(failurePolicy)
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    w.Group.WebhookName(),
		ClientConfig:            clientConfig(w.Group.Path(), o),
		Rules:                   rules,
		FailurePolicy:           &failure,
		MatchPolicy:             mc.MatchPolicy,
		NamespaceSelector:       ns,
		ObjectSelector:          w.ObjectSelector.DeepCopy(),
		SideEffects:             &sideEffects,
		TimeoutSeconds:          &timeout,
		AdmissionReviewVersions: []string{"v1", "v1beta1"},
	}
}
