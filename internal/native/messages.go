package native

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// message is the CEL of the message tollgate's webhook gives when the
// policy denies (labelrule.Explain): the subject, the policy, then each
// failed expression's message and each label problem, joined by "; ".
// A Warn policy's warning is the policy and the messages alone, as
// tollgate's webhook warns.
func (c *compiler) message(p *policy.Policy) string {
	v := p.Spec.Validate
	var parts []string
	for i, e := range v.Expressions {
		parts = append(parts, fmt.Sprintf("(variables.%s[%d] == true ? dyn([]) : dyn([%s]))", varRules, i, c.ruleMessage(e)))
	}
	if len(v.Labels) > 0 {
		parts = append(parts, "variables."+varLabels)
	}
	joined := "(" + strings.Join(parts, " + ") + ").join('; ')"
	if v.Action == policy.Warn {
		return quote(p.Name()+": ") + " + " + joined
	}
	return c.subject() + " + " + quote(" violates policy "+p.Name()+": ") + " + " + joined
}

// ruleMessage is the CEL of a failed expression's message, chosen as the
// apiserver's validator chooses it: the message expression's string,
// trimmed, unless it is empty, has a line break or is over 5 KiB; else
// the message; else "failed expression: " and the expression.
func (c *compiler) ruleMessage(e policy.Expression) string {
	if e.MessageExpression == "" {
		return quote(fallback(e))
	}
	return fmt.Sprintf("[dyn(%s)].map(m, type(m) == string && m.trim() != '' && size(bytes(m.trim())) <= 5120 && !m.trim().contains('\\n') ? m.trim() : %s)[0]",
		c.scoped(e.MessageExpression), quote(fallback(e)))
}

// fallback is an expression's message when it has no message expression,
// or that gives none.
func fallback(e policy.Expression) string {
	if m := strings.TrimSpace(e.Message); m != "" {
		return m
	}
	return "failed expression: " + strings.TrimSpace(e.Expression)
}

// labelFallback is the label rules' message where their messageExpression
// cannot be evaluated.
func labelFallback(v *policy.Validate) string {
	if v.Message != "" {
		return v.Message
	}
	return "required labels are missing or have values not allowed"
}

// subject is the CEL of what tollgate's messages name (labelrule.Subject):
// the kind in lower case, and the object's name, or its generateName and
// "*" with " (generated name)", or nothing; the object of a DELETE is
// oldObject. Names and generateNames reaching admission are DNS names,
// which Go's %q quotes as '"' + name + '"'.
func (c *compiler) subject() string {
	s := `[dyn(object != null ? object : oldObject)].map(o, ` +
		`[has(o.metadata.name) && o.metadata.name != '' ? o.metadata.name : request.?name.orValue('')].map(n, ` +
		`request.kind.kind.lowerAscii() + (n != '' ? ' "' + n + '"' : ` +
		`has(o.metadata.generateName) && o.metadata.generateName != '' ? ' "' + o.metadata.generateName + '*" (generated name)' : ''))[0])[0]`
	if c.template {
		return "(variables." + varTemplate + " ? 'the pod template of ' : '') + " + s
	}
	return s
}

// labelProblems is the CEL of what the label rules find, in order, as
// labelrule.Problems words it (or the policy's message for all), on
// CREATE and UPDATE only. Label values reaching admission are valid
// label values, which Go's %q quotes as '"' + value + '"'.
func (c *compiler) labelProblems(v *policy.Validate) string {
	obj := "object"
	if c.template {
		obj = "variables." + varPod
	}
	checks := make([]string, len(v.Labels))
	for i, r := range v.Labels {
		k := quote(r.Key)
		if len(r.Values) == 0 {
			checks[i] = fmt.Sprintf("(%s in l ? dyn([]) : dyn([%s]))", k, quote(fmt.Sprintf("label %q is missing", r.Key)))
			continue
		}
		allowed := "[" + strings.Join(r.Values, ", ") + "]"
		values := make([]string, len(r.Values))
		for j, val := range r.Values {
			values[j] = quote(val)
		}
		checks[i] = fmt.Sprintf("(!(%[1]s in l) ? dyn([%[2]s]) : l[%[1]s] in [%[3]s] ? dyn([]) : dyn([%[4]s + l[%[1]s] + '\"']))",
			k, quote(fmt.Sprintf("label %q is missing; it must be one of %s", r.Key, allowed)),
			strings.Join(values, ", "), quote(fmt.Sprintf("label %q must be one of %s, got \"", r.Key, allowed)))
	}
	problems := strings.Join(checks, " + ")
	if v.Message != "" {
		problems = fmt.Sprintf("[%s].map(p, size(p) == 0 ? dyn([]) : dyn([%s]))[0]", problems, quote(v.Message))
	}
	return fmt.Sprintf("request.operation in ['CREATE', 'UPDATE'] ? [has(%[1]s.metadata.labels) ? %[1]s.metadata.labels : dyn({})].map(l, %[2]s)[0] : dyn([])", obj, problems)
}

// quote is s as a CEL string literal.
func quote(s string) string { return strconv.Quote(s) }
