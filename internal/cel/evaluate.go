package cel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// validate decides the program's rules on in as the apiserver's
// validator.Validate does (failurePolicy Fail, no params, no authorizer),
// with the review's values built once for all policies and each variable
// evaluated once per policy evaluation (see varContext): the same
// decisions, messages and cost budget. EvaluateTracked is the
// apiserver's validator itself, which the tests compare it with.
//
// It first asks the fast path (package fastpath, through fast.go), which
// admits, or, with the direct evaluator, denies too.
func (p *Program) validate(ctx context.Context, in *Input) []validating.PolicyDecision {
	if d := p.decideFast(ctx, in); d != nil {
		return d
	}
	r := in.values()
	e := &policyEval{ctx: ctx, p: p, r: r, done: map[string]*varResult{}, shared: r.shared}
	evalResults, remaining, err := e.forInput(p.rules, celconfig.RuntimeCELCostBudget)
	if err != nil {
		return []validating.PolicyDecision{{Action: validating.ActionDeny, Evaluation: validating.EvalError, Message: err.Error()}}
	}
	decisions := make([]validating.PolicyDecision, len(evalResults))
	messageResults, _, err := e.forInput(p.messages, remaining)
	for i, evalResult := range evalResults {
		d := &decisions[i]
		d.Elapsed = evalResult.Elapsed
		validation := evalResult.ExpressionAccessor.(*validating.ValidationCondition)
		var messageResult *plugincel.EvaluationResult
		if len(messageResults) > i {
			messageResult = &messageResults[i]
		}
		switch {
		case evalResult.Error != nil:
			d.Action, d.Evaluation, d.Message = validating.ActionDeny, validating.EvalError, evalResult.Error.Error()
		case errors.Is(err, apiservercel.ErrInternal) || errors.Is(err, apiservercel.ErrOutOfBudget):
			d.Action, d.Evaluation, d.Message = validating.ActionDeny, validating.EvalError, fmt.Sprintf("failed messageExpression: %s", err)
		case evalResult.EvalResult != types.True:
			d.Action, d.Evaluation = validating.ActionDeny, validating.EvalDeny
			d.Reason = metav1.StatusReasonInvalid
			if validation.Reason != nil {
				d.Reason = *validation.Reason
			}
			d.Message = denialMessage(validation, messageResult)
		default:
			d.Action, d.Evaluation = validating.ActionAdmit, validating.EvalAdmit
		}
	}
	return decisions
}

// denialMessage is the message of a denied rule, as the validator words it.
func denialMessage(validation *validating.ValidationCondition, messageResult *plugincel.EvaluationResult) string {
	var message string
	if messageResult != nil && messageResult.Error == nil && messageResult.EvalResult != nil {
		if s, ok := messageResult.EvalResult.Value().(string); ok {
			message = strings.TrimSpace(s)
			if len(message) > celconfig.MaxEvaluatedMessageExpressionSizeBytes || strings.ContainsAny(message, "\n") {
				message = ""
			}
		}
	}
	if message == "" && len(validation.Message) > 0 {
		message = strings.TrimSpace(validation.Message)
	}
	if message == "" {
		message = fmt.Sprintf("failed expression: %v", strings.TrimSpace(validation.Expression))
	}
	return message
}

// forInput evaluates a list of expressions in a new context, as the
// apiserver's condition.ForInput does.
func (e *policyEval) forInput(results []plugincel.CompilationResult, budget int64) ([]plugincel.EvaluationResult, int64, error) {
	evaluations := make([]plugincel.EvaluationResult, len(results))
	if len(results) == 0 {
		return evaluations, budget, nil
	}
	if placeholders(results) {
		// Nothing to evaluate: what the apiserver makes of them without the
		// activation, which could only fail as the rules' already has.
		return evaluations, budget, nil
	}
	if e.r.err != nil {
		return nil, -1, e.r.err
	}
	c := e.newContext()
	var err error
	for i, r := range results {
		evaluations[i], budget, err = c.evaluateExpression(r, budget)
		if err != nil {
			return nil, -1, err
		}
	}
	return evaluations, budget, nil
}

// evaluateExpression is the apiserver's evaluationActivation.Evaluate:
// the expression, then the cost of the variables it read and its own,
// against the remaining budget.
func (c *varContext) evaluateExpression(r plugincel.CompilationResult, remaining int64) (plugincel.EvaluationResult, int64, error) {
	var evaluation plugincel.EvaluationResult
	if r.ExpressionAccessor == nil { // a placeholder
		return evaluation, remaining, nil
	}
	evaluation.ExpressionAccessor = r.ExpressionAccessor
	if r.Error != nil {
		evaluation.Error = &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: fmt.Sprintf("compilation error: %v", r.Error), Cause: r.Error}
		return evaluation, remaining, nil
	}
	if r.Program == nil {
		evaluation.Error = &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: "unexpected internal error compiling expression"}
		return evaluation, remaining, nil
	}
	t1 := time.Now()
	evalResult, evalDetails, err := r.Program.ContextEval(c.e.ctx, c.act)
	outOfBudget := &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid,
		Detail: "validation failed due to running out of cost budget, no further validation rules will be run", Cause: apiservercel.ErrOutOfBudget}
	if cost := c.getAndResetCost(); cost > remaining {
		return evaluation, -1, outOfBudget
	} else {
		remaining -= cost
	}
	evaluation.Elapsed = time.Since(t1)
	if evalDetails == nil {
		return evaluation, -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInternal,
			Detail: fmt.Sprintf("runtime cost could not be calculated for expression: %v, no further expression will be run", r.ExpressionAccessor.GetExpression())}
	}
	rtCost := evalDetails.ActualCost()
	if rtCost == nil {
		return evaluation, -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid,
			Detail: fmt.Sprintf("runtime cost could not be calculated for expression: %v, no further expression will be run", r.ExpressionAccessor.GetExpression()), Cause: apiservercel.ErrOutOfBudget}
	}
	if *rtCost > math.MaxInt64 || int64(*rtCost) > remaining {
		return evaluation, -1, outOfBudget
	}
	remaining -= int64(*rtCost)
	if err != nil {
		evaluation.Error = &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid,
			Detail: fmt.Sprintf("expression '%v' resulted in error: %v", r.ExpressionAccessor.GetExpression(), err)}
	} else {
		evaluation.EvalResult = evalResult
	}
	return evaluation, remaining, nil
}

// placeholders tells whether no result has an expression (rules without
// message expressions).
func placeholders(results []plugincel.CompilationResult) bool {
	for _, r := range results {
		if r.ExpressionAccessor != nil {
			return false
		}
	}
	return true
}
