package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/references"
)

// compiled is what load time derives from a policy so that no request pays for it.
type compiled struct {
	resources      []schema.GroupResource
	operations     sets.Set[string]
	objectSelector labels.Selector
	nsSelector     labels.Selector
	excluded       sets.Set[string]
	injection      *Injection
	// optOut selects the namespaces where a Pod may opt out of the
	// injection; nil means everywhere, labels.Nothing() nowhere.
	optOut labels.Selector
	// program is the compiled CEL of the policy: conditions and expressions.
	program *cel.Program
	// patches are a mutation's compiled CEL patches.
	patches *cel.Patches
	// references are the policy's declared references, compiled.
	references []*references.Compiled
	// images is a verifyImages policy's globs and attestors.
	images *ImageCheck
}

// References are the policy's declared references, compiled (nil for none).
func (p *Policy) References() []*references.Compiled { return p.compiled.references }

// Patches returns a mutation's compiled CEL patches, nil when it has none.
func (p *Policy) Patches() *cel.Patches { return p.compiled.patches }

// Program returns the policy's compiled CEL, nil when it has none.
func (p *Policy) Program() *cel.Program { return p.compiled.program }

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

func (p *Policy) compile() field.ErrorList {
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
	c.resources = m.GroupResources()
	matchPath := field.NewPath("spec", "match")
	sel, err := selector(m.ObjectSelector)
	if err != nil {
		return field.ErrorList{field.Invalid(matchPath.Child("objectSelector"), m.ObjectSelector, err.Error())}
	}
	c.objectSelector = sel
	if c.nsSelector, err = selector(m.NamespaceSelector); err != nil {
		return field.ErrorList{field.Invalid(matchPath.Child("namespaceSelector"), m.NamespaceSelector, err.Error())}
	}
	if in := p.Spec.Inject; in != nil {
		c.injection = &Injection{}
		if o := in.OptOut; o != nil {
			c.optOut = labels.Nothing()
			if o.NamespaceSelector != nil {
				if c.optOut, err = selector(o.NamespaceSelector); err != nil {
					return field.ErrorList{field.Invalid(field.NewPath("spec", "inject", "optOut", "namespaceSelector"), o.NamespaceSelector, err.Error())}
				}
			}
		}
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
					return field.ErrorList{field.InternalError(field.NewPath("spec", "inject"), err)}
				}
				*step.dst = append(*step.dst, item)
			}
		}
	}
	refs, errs := p.compileReferences()
	if len(errs) > 0 {
		return errs
	}
	c.references = refs
	prog, errs := p.compileCEL(refs)
	if len(errs) > 0 {
		return errs
	}
	c.program = prog
	if m := p.Spec.Mutate; m != nil && len(m.Patches) > 0 {
		exprs := make([]string, len(m.Patches))
		for i, pe := range m.Patches {
			exprs[i] = pe.Expression
		}
		patches, errs := cel.CompilePatches(exprs, field.NewPath("spec", "mutate", "patches"))
		if len(errs) > 0 {
			return errs
		}
		c.patches = patches
	}
	if v := p.Spec.VerifyImages; v != nil {
		if c.images, err = compileImages(p.Name(), v); err != nil {
			return field.ErrorList{field.Invalid(field.NewPath("spec", "verifyImages"), "", err.Error())}
		}
	}
	p.compiled = c
	return nil
}

// GroupResources are the resources the match names (verified by verify, so
// parsing cannot fail here), and the Pod controllers with podControllers.
func (m *Match) GroupResources() []schema.GroupResource {
	var out []schema.GroupResource
	for _, r := range m.Resources {
		if gr, err := parseResource(r); err == nil {
			out = append(out, gr)
		}
	}
	if m.PodControllers {
		out = append(out, PodControllers...)
	}
	return out
}

// compileCEL compiles the policy's conditions, variables and expressions.
func (p *Policy) compileCEL(refs []*references.Compiled) (*cel.Program, field.ErrorList) {
	v := p.Spec.Validate
	if len(p.Spec.Match.Conditions) == 0 && (v == nil || len(v.Expressions) == 0) {
		return nil, nil
	}
	spec := cel.Spec{Name: p.Name(), References: refs}
	for _, c := range p.Spec.Match.Conditions {
		spec.Conditions = append(spec.Conditions, cel.NamedExpression{Name: c.Name, Expression: c.Expression})
	}
	if v != nil {
		for _, vr := range v.Variables {
			spec.Variables = append(spec.Variables, cel.NamedExpression{Name: vr.Name, Expression: vr.Expression})
		}
		for _, e := range v.Expressions {
			spec.Validations = append(spec.Validations, cel.Validation{Expression: e.Expression, Message: e.Message, MessageExpression: e.MessageExpression, Reason: e.Reason})
		}
	}
	prog, errs := cel.Compile(spec, field.NewPath("spec", "validate"))
	if len(errs) > 0 || len(refs) == 0 {
		return prog, errs
	}
	// What the expressions read of the referenced objects is all the store
	// keeps of them.
	reads := spec.ReferenceReads()
	for _, c := range refs {
		c.SetRead(reads[c.Name])
	}
	return prog, nil
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

// parseResource reads "pods", "group/resource", "resource.group" or "*"
// ("*" also as the group or the resource: "apps/*", "*.apps").
func parseResource(s string) (schema.GroupResource, error) {
	var gr schema.GroupResource
	switch group, resource, slash := strings.Cut(s, "/"); {
	case s == "*":
		gr = schema.GroupResource{Group: "*", Resource: "*"}
	case slash:
		gr = schema.GroupResource{Group: group, Resource: resource}
	default:
		resource, group, _ := strings.Cut(s, ".")
		gr = schema.GroupResource{Group: group, Resource: resource}
	}
	if gr.Resource == "" || strings.Contains(gr.Resource, "/") || gr.Resource != strings.ToLower(gr.Resource) {
		return schema.GroupResource{}, fmt.Errorf("want a lower-case plural resource: pods, deployments.apps, apps/deployments or *")
	}
	return gr, nil
}

// selector converts a label selector; nil selects everything, as in a webhook.
func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}
