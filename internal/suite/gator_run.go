package suite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/open-policy-agent/frameworks/constraint/pkg/apis/constraints"
	"github.com/open-policy-agent/frameworks/constraint/pkg/core/templates"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/gatekeeper"
)

// Check.Resource of the checks that are about a whole test, not a case.
const (
	gatorWholeTest = "(test)"
	gatorInvalid   = "(invalid constraint)"
	gatorNoCases   = "(no cases)"
)

// checks runs every test of the suite as gator verify does (its
// pkg/gator/verify/runner.go), with Gatekeeper's own evaluator: one Check
// per case, passed when every assertion holds; one for a test that is
// invalid, has no cases, or cannot run (its template, Constraint or
// expansion refused, a CEL-only template), never passed silently.
func (g *gatorSuite) checks(ctx context.Context, file string) []Check {
	if g.skip {
		return []Check{{Suite: file, Policy: "(suite)", Resource: "skip", Want: engine.Skip, Got: engine.Skip, Message: "skip: true"}}
	}
	dir := filepath.Dir(file)
	var checks []Check
	for i := range g.tests {
		checks = append(checks, gatorTestChecks(ctx, file, dir, &g.tests[i])...)
	}
	return checks
}

// gatorTestChecks are one test's checks.
func gatorTestChecks(ctx context.Context, file, dir string, t *GatorTest) []Check {
	whole := func(resource string, got engine.Outcome, err error) []Check {
		c := Check{Suite: file, Policy: t.Name, Resource: resource, Want: engine.Pass, Got: got}
		if err != nil {
			c.Message = err.Error()
		}
		if got != engine.Pass {
			c.Problem = fmt.Sprintf("want pass, got %s", got)
		}
		return []Check{c}
	}
	if t.Skip {
		return []Check{{Suite: file, Policy: t.Name, Resource: gatorWholeTest, Want: engine.Skip, Got: engine.Skip, Message: "skip: true"}}
	}
	if t.Expansion != "" {
		return whole(gatorWholeTest, engine.Error, fmt.Errorf("expansion %s: ExpansionTemplates are not supported by tollgate test", t.Expansion))
	}
	tmpl, con, err := readGatorPolicy(dir, t)
	if err != nil {
		return whole(gatorWholeTest, engine.Error, err)
	}
	// As gator: the template and Constraint are added once for the test,
	// where an invalid test wants the Constraint's schema error.
	_, err = gatorEvaluator(ctx, tmpl, con)
	switch {
	case t.Invalid && errors.Is(err, constraints.ErrSchema):
		return whole(gatorInvalid, engine.Pass, err)
	case t.Invalid && errors.Is(err, gatekeeper.ErrNoRego):
		return whole(gatorInvalid, engine.Error, err)
	case t.Invalid && err == nil:
		return whole(gatorInvalid, engine.Fail, fmt.Errorf("the Constraint must fail its template's schema (%w); it was accepted", constraints.ErrSchema))
	case t.Invalid:
		return whole(gatorInvalid, engine.Fail, fmt.Errorf("the Constraint must fail its template's schema (%w), got: %w", constraints.ErrSchema, err))
	case err != nil:
		return whole(gatorWholeTest, engine.Error, err)
	case len(t.Cases) == 0:
		return whole(gatorNoCases, engine.Pass, errors.New("the template and Constraint load"))
	}
	var checks []Check
	for _, c := range t.Cases {
		checks = append(checks, gatorCaseCheck(ctx, file, dir, t.Name, tmpl, con, c))
	}
	return checks
}

// readGatorPolicy reads a test's template and Constraint.
func readGatorPolicy(dir string, t *GatorTest) (*templates.ConstraintTemplate, *unstructured.Unstructured, error) {
	u, err := readGatorObject(filepath.Join(dir, t.Template))
	if err != nil {
		return nil, nil, fmt.Errorf("template: %w", err)
	}
	js, err := u.MarshalJSON()
	if err != nil {
		return nil, nil, fmt.Errorf("template %s: %w", t.Template, err)
	}
	if !gatekeeper.IsTemplate(js) {
		return nil, nil, fmt.Errorf("template %s: %s %s is not a ConstraintTemplate", t.Template, u.GetAPIVersion(), u.GetKind())
	}
	tmpl, err := gatekeeper.DecodeTemplate(js)
	if err != nil {
		return nil, nil, fmt.Errorf("template %s: %w", t.Template, err)
	}
	con, err := readGatorObject(filepath.Join(dir, t.Constraint))
	if err != nil {
		return nil, nil, fmt.Errorf("constraint: %w", err)
	}
	if con.GroupVersionKind().Group != gatekeeper.ConstraintsGroup {
		return nil, nil, fmt.Errorf("constraint %s: %s %s is not a Constraint (%s)", t.Constraint, con.GetAPIVersion(), con.GetKind(), gatekeeper.ConstraintsGroup)
	}
	return tmpl, con, nil
}

// gatorEvaluator is a fresh evaluator with the template and Constraint.
func gatorEvaluator(ctx context.Context, tmpl *templates.ConstraintTemplate, con *unstructured.Unstructured) (*gatekeeper.Evaluator, error) {
	e, err := gatekeeper.NewEvaluator(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	if err := e.AddTemplate(ctx, tmpl.DeepCopy()); err != nil {
		return nil, err
	}
	if err := e.AddConstraint(ctx, con.DeepCopy()); err != nil {
		return nil, err
	}
	return e, nil
}

// gatorCaseCheck runs one case: a fresh evaluator, the inventory added,
// the object reviewed at gator's enforcement point, every assertion
// checked against every violation, whatever its enforcement action.
func gatorCaseCheck(ctx context.Context, file, dir, test string, tmpl *templates.ConstraintTemplate, con *unstructured.Unstructured, c *GatorCase) Check {
	check := Check{Suite: file, Policy: test, Resource: c.Name, Want: engine.Pass}
	if c.Skip {
		check.Want, check.Got, check.Message = engine.Skip, engine.Skip, "skip: true"
		return check
	}
	messages, err := gatorReview(ctx, dir, tmpl, con, c)
	if err != nil {
		check.Got, check.Message = engine.Error, err.Error()
		check.Problem = "want pass, got error"
		return check
	}
	check.Got, check.Message = engine.Pass, fmt.Sprintf("%d violations", len(messages))
	for i := range c.Assertions {
		if err := c.Assertions[i].Check(messages); err != nil {
			check.Got, check.Message = engine.Fail, err.Error()
			check.Problem = fmt.Sprintf("assertions[%d] does not hold", i)
			return check
		}
	}
	return check
}

// gatorReview reviews a case's object and gives its violations' messages.
func gatorReview(ctx context.Context, dir string, tmpl *templates.ConstraintTemplate, con *unstructured.Unstructured, c *GatorCase) ([]string, error) {
	e, err := gatorEvaluator(ctx, tmpl, con)
	if err != nil {
		return nil, err
	}
	obj, err := readGatorObject(filepath.Join(dir, c.Object))
	if err != nil {
		return nil, fmt.Errorf("object: %w", err)
	}
	for _, inv := range c.Inventory {
		objs, err := readGatorObjects(filepath.Join(dir, inv))
		if err != nil {
			return nil, fmt.Errorf("inventory: %w", err)
		}
		for _, o := range objs {
			if err := e.AddData(ctx, o); err != nil {
				return nil, err
			}
		}
	}
	// gator verify syncs the case's inventory, none at all when it names none.
	e.InventoryGiven()
	var vs []gatekeeper.Violation
	if obj.GetKind() == "AdmissionReview" && obj.GroupVersionKind().Group == admissionv1.SchemeGroupVersion.Group {
		req, err := gatorRequest(obj)
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", c.Object, err)
		}
		vs, err = e.ReviewRequest(ctx, req, nil, gatekeeper.Gator)
		if err != nil {
			return nil, err
		}
	} else if vs, err = e.ReviewObject(ctx, obj, nil, gatekeeper.Gator); err != nil {
		return nil, err
	}
	messages := make([]string, len(vs))
	for i, v := range vs {
		messages[i] = v.Message
	}
	return messages, nil
}

// gatorRequest is an AdmissionReview's request, refused as gator refuses
// it: not an AdmissionReview, no request, no object or oldObject, or one
// that is not an object.
func gatorRequest(u *unstructured.Unstructured) (*admissionv1.AdmissionRequest, error) {
	var ar admissionv1.AdmissionReview
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.UnstructuredContent(), &ar, true); err != nil {
		return nil, fmt.Errorf("not an AdmissionReview: %w", err)
	}
	if ar.Request == nil {
		return nil, errors.New("the AdmissionReview has no request")
	}
	if ar.Request.Object.Raw == nil && ar.Request.OldObject.Raw == nil {
		return nil, errors.New("the AdmissionReview's request has no object or oldObject to review")
	}
	for _, raw := range [][]byte{ar.Request.Object.Raw, ar.Request.OldObject.Raw} {
		if raw == nil {
			continue
		}
		if err := new(unstructured.Unstructured).UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("the AdmissionReview's request: %w", err)
		}
	}
	return ar.Request, nil
}
