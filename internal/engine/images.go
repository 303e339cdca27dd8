package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/imageverify"
	"github.com/tollgate-dev/tollgate/internal/labelrule"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// defaultImageBudget bounds a review's registry calls when Options gives
// none: under the webhooks' default timeout of 5 s, so that the answer
// (and the policy's failurePolicy) is tollgate's, not the apiserver's.
const defaultImageBudget = 4 * time.Second

var errNoVerifier = errors.New("image verification needs registry access, which this command was not given")

// verifyImages runs a group of verifyImages policies: every image a policy
// selects must carry a signature by one of its attestors, and the
// attestations it names. On UPDATE only
// images the old object did not have are checked, as Kyverno does: an
// image already admitted is the background audit's.
func (e *Engine) verifyImages(ctx context.Context, g *policy.Group, req *admission.Request) Evaluation {
	in, err := newInput(req)
	if err != nil {
		return errorAll(g, admission.BadRequest(err))
	}
	if len(req.Object()) == 0 {
		return notApplicableAll(g, "image verification applies to objects being created or updated")
	}
	policies, results, exempt := e.matching(g, req, in.labels, in.oldLabels)
	if len(policies) == 0 {
		var a answers
		return a.evaluation(results)
	}
	w, before, err := imagesOf(req)
	if err != nil {
		return errorAll(g, admission.BadRequest(err))
	}
	images := w.Images
	ns := e.namespace(req.Namespace)
	subject := labelrule.Subject{Kind: req.Kind.Kind, Name: firstNonEmpty(in.meta.Name, req.Name), GenerateName: in.meta.GenerateName}
	budget := e.imageBudget
	if budget <= 0 {
		budget = defaultImageBudget
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	if e.credentials != nil {
		ctx = imageverify.WithKeychain(ctx, e.credentials(ctx, req.Namespace, w))
	}
	var a answers
	for _, p := range policies {
		unmet, err := e.conditions(ctx, p, req, in, req.Object(), false, ns)
		if unmet != "" {
			results = append(results, notApplicable(p.Name(), admissionpolicy.MatchConditionsNotMet(unmet)))
			continue
		}
		check := p.ImageCheck()
		var selected []imageverify.Image
		for _, i := range images {
			if check.Selects(i.Ref) && !before.Has(i.Ref) {
				selected = append(selected, i)
			}
		}
		if err == nil && len(selected) == 0 {
			results = append(results, notApplicable(p.Name(), "no image the policy checks (spec.verifyImages.images)"+changedOnly(before)))
			continue
		}
		var problems, verified []string
		if err == nil {
			problems, verified, err = e.verifyAll(ctx, check.Requirement(), selected)
		}
		r := Result{Policy: p.Name(), Outcome: Pass, Message: "verified: " + strings.Join(verified, ", ")}
		switch {
		case err != nil:
			r = a.undecided(p, subject, err)
		case len(problems) > 0:
			r = a.violated(p, p.Spec.VerifyImages.Action, subject, problems, http.StatusForbidden)
		}
		results = append(results, exempt[p].apply(r))
	}
	return a.evaluation(results)
}

// imagesOf are the images (and pull credentials) of the request's
// object, and the images its old object had (on UPDATE).
func imagesOf(req *admission.Request) (imageverify.Workload, sets.Set[string], error) {
	w, err := imageverify.Inspect(req.Object())
	if err != nil {
		return w, nil, err
	}
	before := sets.New[string]()
	if len(req.OldObject()) > 0 {
		old, err := imageverify.Images(req.OldObject())
		if err != nil {
			return w, nil, err
		}
		for _, i := range old {
			before.Insert(i.Ref)
		}
	}
	return w, before, nil
}

func changedOnly(before sets.Set[string]) string {
	if before.Len() == 0 {
		return ""
	}
	return "; on an update, only images the old object did not have are checked"
}

// verifyAll verifies the images at once. problems say, image by image,
// why one did not verify; verified name those that did; err is the first
// image that could not be checked at all.
func (e *Engine) verifyAll(ctx context.Context, r imageverify.Requirement, images []imageverify.Image) (problems, verified []string, err error) {
	if e.images == nil {
		return nil, nil, errNoVerifier
	}
	outcomes := make([]imageverify.Outcome, len(images))
	var wg sync.WaitGroup
	for i, img := range images {
		wg.Go(func() { outcomes[i] = e.images.Verify(ctx, img.Ref, r) })
	}
	wg.Wait()
	for i, o := range outcomes {
		img := images[i]
		switch {
		case o.Err != nil:
			if err == nil {
				err = fmt.Errorf("image %s (%s): %w", img.Ref, img.Path, o.Err)
			}
		case o.Verified:
			verified = append(verified, fmt.Sprintf("%s@%s by %s", img.Ref, o.Digest, o.Attestor))
		default:
			problems = append(problems, fmt.Sprintf("image %s (%s): %s", img.Ref, img.Path, o.Reason))
		}
	}
	return problems, verified, err
}
