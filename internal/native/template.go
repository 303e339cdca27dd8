package native

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tollgate-dev/tollgate/internal/cel/analysis"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// compiler writes the CEL of one policy.
type compiler struct {
	// template: the policy has podControllers, so its expressions read a
	// Pod controller's template as the Pod it makes.
	template bool
}

// changedByTemplate are the fields of request that differ when tollgate
// reads a Pod controller as its Pod (the Pod's kind and resource): an
// expression reading them cannot be compiled with podControllers.
var changedByTemplate = []string{"kind", "resource", "requestKind", "requestResource"}

func newCompiler(p *policy.Policy) (*compiler, error) {
	v := p.Spec.Validate
	for _, vr := range v.Variables {
		if strings.HasPrefix(vr.Name, varPrefix) {
			return nil, fmt.Errorf("variable %s: names starting with %s are the compiled policy's own", vr.Name, varPrefix)
		}
	}
	c := &compiler{template: p.Spec.Match.PodControllers}
	if !c.template {
		return c, nil
	}
	for _, e := range expressions(p) {
		fields, whole := analysis.Selected("request", e)
		if whole {
			return nil, fmt.Errorf("with podControllers, %q reads request whole, whose kind and resource are the Pod's in tollgate", e)
		}
		for _, f := range fields {
			for _, changed := range changedByTemplate {
				if f == changed {
					return nil, fmt.Errorf("with podControllers, %q reads request.%s, which is the Pod's in tollgate", e, f)
				}
			}
		}
	}
	return c, nil
}

// expressions are every CEL expression of a validate policy.
func expressions(p *policy.Policy) []string {
	var out []string
	for _, c := range p.Spec.Match.Conditions {
		out = append(out, c.Expression)
	}
	v := p.Spec.Validate
	for _, vr := range v.Variables {
		out = append(out, vr.Expression)
	}
	for _, e := range v.Expressions {
		out = append(out, e.Expression, e.MessageExpression)
	}
	return out
}

// templateVariables define varTemplate, varPod and varOldPod for a
// policy with podControllers.
func (c *compiler) templateVariables() []admissionregistrationv1.Variable {
	if !c.template {
		return nil
	}
	return []admissionregistrationv1.Variable{
		{Name: varTemplate, Expression: isTemplate()},
		{Name: varPod, Expression: fmt.Sprintf("variables.%s ? %s : dyn(object)", varTemplate, podOf("object"))},
		{Name: varOldPod, Expression: fmt.Sprintf("variables.%s ? %s : dyn(oldObject)", varTemplate, podOf("oldObject"))},
	}
}

// isTemplate tells whether the request is for a Pod controller.
func isTemplate() string {
	names := make([]string, len(policy.PodControllers))
	for i, gr := range policy.PodControllers {
		names[i] = quote(gr.Group + "/" + gr.Resource)
	}
	return "request.resource.group + '/' + request.resource.resource in [" + strings.Join(names, ", ") + "]"
}

// objectMetaFields are the fields of ObjectMeta other than name and
// namespace: what a template's metadata may hold.
var objectMetaFields = []string{
	"generateName", "selfLink", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
	"labels", "annotations", "ownerReferences", "finalizers", "managedFields",
}

// podOf is the Pod tollgate reads for the controller in the variable obj
// (null for none): apiVersion v1, kind Pod, the template's metadata named
// and namespaced as the controller, and the template's spec. A CronJob's
// template is spec.jobTemplate.spec.template; a missing template is an
// error, as in tollgate.
func podOf(obj string) string {
	meta := []string{
		fmt.Sprintf("'name': dyn(has(%[1]s.metadata.name) ? %[1]s.metadata.name : '')", obj),
		fmt.Sprintf("'namespace': dyn(has(%[1]s.metadata.namespace) ? %[1]s.metadata.namespace : '')", obj),
	}
	for _, f := range objectMetaFields {
		meta = append(meta, fmt.Sprintf("?'%[1]s': m.?%[1]s", f))
	}
	return fmt.Sprintf(
		"dyn(%[1]s == null ? dyn(null) : "+
			"[has(%[1]s.kind) && %[1]s.kind == 'CronJob' ? %[1]s.spec.jobTemplate.spec.template : %[1]s.spec.template].map(t, "+
			"[has(t.metadata) ? t.metadata : dyn({})].map(m, "+
			"{'apiVersion': dyn('v1'), 'kind': dyn('Pod'), 'metadata': dyn({%[2]s}), 'spec': dyn(t.spec)})[0])[0])",
		obj, strings.Join(meta, ", "))
}

// scoped is an expression of the policy where object and oldObject are
// varPod and varOldPod: the expression inside a one-element map whose
// element takes their names.
func (c *compiler) scoped(expr string) string {
	return c.bind(expr, "variables."+varPod, "variables."+varOldPod)
}

// inline is scoped for a match condition, which cannot read variables:
// the Pods are computed in place.
func (c *compiler) inline(expr string) string {
	t := isTemplate()
	return c.bind(expr,
		fmt.Sprintf("(%s ? %s : dyn(object))", t, podOf("object")),
		fmt.Sprintf("(%s ? %s : dyn(oldObject))", t, podOf("oldObject")))
}

func (c *compiler) bind(expr, pod, oldPod string) string {
	if !c.template {
		return expr
	}
	if analysis.Uses("oldObject", expr) {
		expr = fmt.Sprintf("[%s].map(oldObject, %s\n)[0]", oldPod, expr)
	}
	if analysis.Uses("object", expr) {
		expr = fmt.Sprintf("[%s].map(object, %s\n)[0]", pod, expr)
	}
	return expr
}
