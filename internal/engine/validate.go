package engine

import (
	"strings"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/validation"
)

// validate runs a group's label policies. They check what is created or
// updated; deleting or connecting to an object is never refused by labels.
func (e *Engine) validate(g *policy.Group, req *admission.Request) admission.Response {
	if req.Operation != admission.Create && req.Operation != admission.Update {
		return admission.Allowed()
	}
	obj, err := decodeMeta(req.Object)
	if err != nil {
		return admission.BadRequest(err)
	}
	var oldLabels map[string]string
	if req.Operation == admission.Update && len(req.OldObject) > 0 {
		old, err := decodeMeta(req.OldObject)
		if err != nil {
			return admission.BadRequest(err)
		}
		oldLabels = old.Metadata.Labels
		if oldLabels == nil {
			oldLabels = map[string]string{}
		}
	}
	policies := matching(g, req, obj.Metadata.Labels, oldLabels)
	subject := validation.Subject{Kind: req.Kind.Kind, Name: firstNonEmpty(obj.Metadata.Name, req.Name), GenerateName: obj.Metadata.GenerateName}
	var messages []string
	for _, p := range policies {
		if problems := validation.CheckLabels(p.Spec.Validate, obj.Metadata.Labels); len(problems) > 0 {
			messages = append(messages, validation.Explain(subject, p, problems))
		}
	}
	if len(messages) == 0 {
		resp := admission.Allowed()
		resp.Policies = names(policies)
		return resp
	}
	resp := admission.Denied(strings.Join(messages, "; "))
	resp.Policies = names(policies)
	return resp
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
