package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	gomodulesjsonpatch "gomodules.xyz/jsonpatch/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// mutate runs a group's mutation policies in order, each on the
// object as the ones before left it. The answer is one patch against the
// object as received; every policy's part of it is applied here first, so a
// patch the apiserver could not apply is never sent.
func (e *Engine) mutate(ctx context.Context, g *policy.Group, req *admission.Request) Evaluation {
	in, err := newInput(req)
	if err != nil {
		return errorAll(g, admission.BadRequest(err))
	}
	if len(req.Object()) == 0 {
		return notApplicableAll(g, "mutations apply to objects being created or updated")
	}
	policies, results, _ := e.matching(g, req, in.labels, in.oldLabels)
	ns := e.namespace(req.Namespace)
	doc := req.Object()
	var all jsonpatch.Patch
	var warnings, patched, denials []string
	for _, p := range policies {
		unmet, err := e.conditions(ctx, p, req, in, doc, len(all) > 0, ns)
		if unmet != "" {
			results = append(results, notApplicable(p.Name(), admissionpolicy.MatchConditionsNotMet(unmet)))
			continue
		}
		var ops jsonpatch.Patch
		next := doc
		if err == nil {
			ops, next, err = e.mutateOne(ctx, p, req, doc, ns)
		}
		r := Result{Policy: p.Name(), Outcome: Pass, Message: "no change needed"}
		switch {
		case err != nil && p.Spec.FailurePolicy == policy.Ignore:
			r.Outcome, r.Message = Warn, fmt.Sprintf("not applied (failurePolicy Ignore): %v", err)
			warnings = append(warnings, fmt.Sprintf("tollgate: policy %s not applied: %v", p.Name(), err))
		case err != nil:
			r.Outcome, r.Message = Fail, fmt.Sprintf("policy %s could not mutate %s %q: %v", p.Name(), strings.ToLower(req.Kind.Kind), req.Name, err)
			denials = append(denials, r.Message)
		case len(ops) > 0:
			r.Message = fmt.Sprintf("%d patch operations", len(ops))
			all = append(all, ops...)
			patched = append(patched, p.Name())
			doc = next
		}
		results = append(results, r)
	}
	if len(denials) > 0 {
		resp := admission.Errored(fmt.Errorf("%s", strings.Join(denials, "; ")))
		resp.Policies = applied(results)
		return Evaluation{Response: resp, Results: results}
	}
	resp := admission.Patched(all)
	resp.Warnings = warnings
	resp.Policies = patched
	return Evaluation{Response: resp, Results: results}
}

// conditions evaluates a mutation policy's conditions as a webhook's
// matchConditions are, on the object as the policies before it left it
// (doc, changed when they changed it): unmet names the first that is
// false; err is one that could not be evaluated.
func (e *Engine) conditions(ctx context.Context, p *policy.Policy, req *admission.Request, in *input, doc []byte, changed bool, ns *corev1.Namespace) (unmet string, err error) {
	prog := p.Program() // a mutation policy's holds its conditions only
	if prog == nil {
		return "", nil
	}
	var ci *cel.Input
	if changed {
		cur, jerr := cel.ObjectFromJSON(doc)
		if jerr != nil {
			return "", jerr
		}
		ci, err = in.celFor(req, cur, ns)
	} else {
		ci, err = in.cel(req, ns)
	}
	if err != nil {
		return "", err
	}
	ci.TrackedOnly = e.trackedOnly
	out := prog.Evaluate(ctx, ci)
	switch {
	case out.Err != nil:
		return "", out.Err
	case out.Skipped:
		return out.Unmet, nil
	}
	return "", nil
}

// mutateOne returns one policy's operations against doc, and doc after them.
func (e *Engine) mutateOne(ctx context.Context, p *policy.Policy, req *admission.Request, doc []byte, ns *corev1.Namespace) (jsonpatch.Patch, []byte, error) {
	m := p.Spec.Mutate
	var obj map[string]any
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil, nil, fmt.Errorf("cannot read object: %w", err)
	}
	meta, _ := obj["metadata"].(map[string]any)
	ops := mapOps("labels", meta, m.Labels, m.Overwrite)
	ops = append(ops, mapOps("annotations", meta, m.Annotations, m.Overwrite)...)
	next := doc
	if len(ops) > 0 {
		var err error
		if next, err = jsonpatch.Apply(doc, ops); err != nil {
			return nil, nil, err
		}
	}
	if patches := p.Patches(); patches != nil {
		cur, err := cel.ObjectFromJSON(next)
		if err != nil {
			return nil, nil, err
		}
		in, err := (&input{}).celFor(req, cur, ns) // cur is the object; req gives the rest
		if err != nil {
			return nil, nil, err
		}
		out, err := patches.Apply(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		after, err := json.Marshal(out)
		if err != nil {
			return nil, nil, err
		}
		diff, err := diffPatch(next, after)
		if err != nil {
			return nil, nil, err
		}
		if len(diff) > 0 {
			if next, err = jsonpatch.Apply(next, diff); err != nil {
				return nil, nil, err
			}
		}
		ops = append(ops, diff...)
	}
	return ops, next, nil
}

// diffPatch is the JSON Patch that turns before into after, in path order
// so that the answer is the same from one run to the next.
func diffPatch(before, after []byte) (jsonpatch.Patch, error) {
	diff, err := gomodulesjsonpatch.CreatePatch(before, after)
	if err != nil {
		return nil, fmt.Errorf("compute patch: %w", err)
	}
	sort.SliceStable(diff, func(i, j int) bool { return diff[i].Path < diff[j].Path })
	ops := make(jsonpatch.Patch, 0, len(diff))
	for _, d := range diff {
		op := jsonpatch.Op{Op: d.Operation, Path: d.Path}
		if d.Operation != "remove" {
			v, err := json.Marshal(d.Value)
			if err != nil {
				return nil, err
			}
			op.Value = v
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// mapOps sets keys of metadata.labels or .annotations: when absent, or when
// different with overwrite. A missing or empty map is created whole.
func mapOps(field string, meta map[string]any, want map[string]string, overwrite bool) jsonpatch.Patch {
	if len(want) == 0 {
		return nil
	}
	have, _ := meta[field].(map[string]any)
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(have) == 0 {
		v, _ := json.Marshal(want)
		return jsonpatch.Patch{jsonpatch.Add(jsonpatch.Pointer("metadata", field), v)}
	}
	var ops jsonpatch.Patch
	for _, k := range keys {
		cur, ok := have[k]
		if ok && (!overwrite || cur == want[k]) {
			continue
		}
		v, _ := json.Marshal(want[k])
		ops = append(ops, jsonpatch.Add(jsonpatch.Pointer("metadata", field, k), v))
	}
	return ops
}
