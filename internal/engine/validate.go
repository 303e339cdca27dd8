package engine

import (
	"strings"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/validation"
)

// validate runs a group's label policies. They check what is created or
// updated; deleting or connecting to an object is never refused by labels.
func (e *Engine) validate(g *policy.Group, req *admission.Request) Evaluation {
	if req.Operation != admission.Create && req.Operation != admission.Update {
		return skipAll(g, "label policies do not check "+string(req.Operation))
	}
	obj, err := decodeMeta(req.Object)
	if err != nil {
		return errorAll(g, admission.BadRequest(err))
	}
	var oldLabels map[string]string
	if req.Operation == admission.Update && len(req.OldObject) > 0 {
		old, err := decodeMeta(req.OldObject)
		if err != nil {
			return errorAll(g, admission.BadRequest(err))
		}
		oldLabels = old.Metadata.Labels
		if oldLabels == nil {
			oldLabels = map[string]string{}
		}
	}
	policies, results := e.matching(g, req, obj.Metadata.Labels, oldLabels)
	subject := validation.Subject{Kind: req.Kind.Kind, Name: firstNonEmpty(obj.Metadata.Name, req.Name), GenerateName: obj.Metadata.GenerateName}
	var messages []string
	for _, p := range policies {
		problems := validation.CheckLabels(p.Spec.Validate, obj.Metadata.Labels)
		if len(problems) == 0 {
			results = append(results, Result{Policy: p.Name(), Outcome: Pass})
			continue
		}
		msg := validation.Explain(subject, p, problems)
		messages = append(messages, msg)
		results = append(results, Result{Policy: p.Name(), Outcome: Fail, Message: msg})
	}
	resp := admission.Allowed()
	if len(messages) > 0 {
		resp = admission.Denied(strings.Join(messages, "; "))
	}
	resp.Policies = names(policies)
	return Evaluation{Response: resp, Results: results}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
