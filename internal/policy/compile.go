package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// compiled is what load time derives from a policy so that no request pays for it.
type compiled struct {
	resources      []schema.GroupResource
	operations     sets.Set[string]
	objectSelector labels.Selector
	nsSelector     labels.Selector
	excluded       sets.Set[string]
	injection      *Injection
}

// Item is one thing an injection policy adds, encoded once at load time:
// JSON for the patch, and its generic form to compare with what a Pod has.
type Item struct {
	Name    string
	JSON    json.RawMessage
	Generic any
}

// Injection is an injection policy's items, ready to patch with.
type Injection struct {
	Containers       []Item
	InitContainers   []Item
	Volumes          []Item
	ImagePullSecrets []Item
}

// Injection returns the encoded items of an injection policy, nil for others.
func (p *Policy) Injection() *Injection { return p.compiled.injection }

func (p *Policy) compile() error {
	m := &p.Spec.Match
	if len(m.Operations) == 0 {
		m.Operations = []string{"CREATE", "UPDATE"}
		if p.IsInjection() {
			m.Operations = []string{"CREATE"}
		}
	}
	if p.Spec.FailurePolicy == "" {
		p.Spec.FailurePolicy = Fail
	}
	c := compiled{operations: sets.New(m.Operations...), excluded: sets.New(m.ExcludeNamespaces...)}
	for _, r := range m.Resources {
		gr, err := parseResource(r)
		if err != nil {
			return err
		}
		c.resources = append(c.resources, gr)
	}
	sel, err := selector(m.ObjectSelector)
	if err != nil {
		return fmt.Errorf("spec.match.objectSelector: %w", err)
	}
	c.objectSelector = sel
	if c.nsSelector, err = selector(m.NamespaceSelector); err != nil {
		return fmt.Errorf("spec.match.namespaceSelector: %w", err)
	}
	if in := p.Spec.Inject; in != nil {
		c.injection = &Injection{}
		for _, step := range []struct {
			dst   *[]Item
			n     int
			name  func(int) string
			value func(int) any
		}{
			{&c.injection.Containers, len(in.Containers), func(i int) string { return in.Containers[i].Name }, func(i int) any { return &in.Containers[i] }},
			{&c.injection.InitContainers, len(in.InitContainers), func(i int) string { return in.InitContainers[i].Name }, func(i int) any { return &in.InitContainers[i] }},
			{&c.injection.Volumes, len(in.Volumes), func(i int) string { return in.Volumes[i].Name }, func(i int) any { return &in.Volumes[i] }},
			{&c.injection.ImagePullSecrets, len(in.ImagePullSecrets), func(i int) string { return in.ImagePullSecrets[i].Name }, func(i int) any { return &in.ImagePullSecrets[i] }},
		} {
			for i := range step.n {
				item, err := NewItem(step.name(i), step.value(i))
				if err != nil {
					return err
				}
				*step.dst = append(*step.dst, item)
			}
		}
	}
	p.compiled = c
	return nil
}

// NewItem encodes v as an injection item named name.
func NewItem(name string, v any) (Item, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return Item{}, fmt.Errorf("encode %q: %w", name, err)
	}
	var generic any
	if err := json.Unmarshal(js, &generic); err != nil {
		return Item{}, fmt.Errorf("encode %q: %w", name, err)
	}
	return Item{Name: name, JSON: js, Generic: generic}, nil
}

// parseResource reads "pods" or "group/resource".
func parseResource(s string) (schema.GroupResource, error) {
	group, resource, found := strings.Cut(s, "/")
	if !found {
		group, resource = "", s
	}
	if resource == "" || strings.Contains(resource, "/") || resource != strings.ToLower(resource) {
		return schema.GroupResource{}, fmt.Errorf("want a lower-case plural resource, e.g. pods or apps/deployments")
	}
	return schema.GroupResource{Group: group, Resource: resource}, nil
}

// selector converts a label selector; nil selects everything, as in a webhook.
func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}
