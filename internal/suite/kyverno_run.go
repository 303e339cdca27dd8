package suite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/exception"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// checks runs the policies on the resources once for each operation the
// expectations need, and checks each expectation as Kyverno's test does:
// a resource named without a namespace is every resource of that kind and
// name, whatever its namespace, each checked; a failed validation is fail
// whatever the policy's validationActions. Unlike Kyverno's, a policy that
// does not apply gives skip, never pass.
func (k *kyvernoSuite) checks(ctx context.Context, file string, set *policy.Set, eng *engine.Engine, objs []*manifest.Object, opts offline.Options) []Check {
	runs := map[admission.Operation][]offline.Finding{}
	findings := func(op admission.Operation) []offline.Finding {
		if f, ok := runs[op]; ok {
			return f
		}
		o := opts
		o.Operation = op
		if op == admission.Update {
			o.Old = objs // as in Kyverno: the resource is both the object and the old object
		}
		runs[op] = offline.Run(ctx, eng, objs, o)
		return runs[op]
	}
	var checks []Check
	for _, r := range k.results {
		known := slices.Contains(set.Names(), policyName(r.Policy))
		for _, res := range r.Resources {
			op := k.operation(r, res)
			matched := matchKyverno(findings(op), r.Kind, res, opts.Kinds)
			if len(matched) == 0 {
				checks = append(checks, Check{Suite: file, Policy: r.Policy, Resource: r.Kind + " " + res, Want: r.Result,
					Problem: fmt.Sprintf("no %s %s among the test's resources", r.Kind, res)})
				continue
			}
			for _, f := range matched {
				c := kyvernoCheck(file, r, f, opts.Kinds)
				if op != admission.Create {
					c.Resource += " (" + string(op) + ")"
				}
				if !known {
					// Else a misspelt name passes as "skip".
					c.Problem = fmt.Sprintf("no policy %s among the test's policies", policyName(r.Policy))
				}
				checks = append(checks, c)
			}
		}
	}
	return checks
}

// matchKyverno finds the resources of a kind named [namespace/]name: with
// a namespace, the one there (namespaced kinds without one are in
// "default"); without, every one of that name.
func matchKyverno(findings []offline.Finding, kind, resource string, kinds *manifest.Kinds) []*offline.Finding {
	var out []*offline.Finding
	for i := range findings {
		f := &findings[i]
		if f.Object.GVK.Kind != kind {
			continue
		}
		if strings.Contains(resource, "/") {
			if resourceKey(f.Object, kinds) == resource {
				out = append(out, f)
			}
		} else if f.Object.Name == resource {
			out = append(out, f)
		}
	}
	return out
}

// kyvernoCheck is one expectation on one resource: the policy's result,
// in Kyverno's terms.
func kyvernoCheck(file string, r kyvernoResult, f *offline.Finding, kinds *manifest.Kinds) Check {
	c := Check{Suite: file, Policy: r.Policy, Resource: r.Kind + " " + strings.TrimPrefix(resourceKey(f.Object, kinds), "/"), Want: r.Result}
	if f.Err != nil {
		c.Got, c.Message = engine.Error, f.Err.Error()
	} else {
		c.Got, c.Message = engine.Skip, notApplicable
		for _, res := range f.Results {
			switch {
			case res.Policy != policyName(r.Policy):
			case !res.Applies():
				c.Got, c.Message = res.Outcome, notApplicable+": "+res.Message
			case strings.HasPrefix(res.Message, "Policy "+res.Policy+" error: "):
				// A validation or condition that erred, in Kyverno's words
				// (internal/validatingpolicy's recordKyverno): Kyverno's test says error.
				c.Got, c.Message = engine.Error, res.Message
			case res.Outcome == engine.Warn:
				// Kyverno's test says fail whatever the validationActions.
				c.Got, c.Message = engine.Fail, res.Message+" (tollgate warns: the policy's validationActions do not deny)"
			default:
				c.Got, c.Message = res.Outcome, res.Message
			}
		}
	}
	if c.Got != c.Want {
		c.Problem = fmt.Sprintf("want %s, got %s", c.Want, c.Got)
	}
	return c
}

// loadExceptions reads the test's exceptions files: Kyverno's
// PolicyExceptions, nothing else.
func (k *kyvernoSuite) loadExceptions(rel func(string) string) ([]*exception.Exception, error) {
	var out []*exception.Exception
	for _, f := range k.exceptions {
		data, err := manifest.ReadFile(rel(f))
		if err != nil {
			return nil, fmt.Errorf("exceptions: %w", err)
		}
		ps, exs, objs, err := policy.ParseAll(rel(f), data)
		if err != nil {
			return nil, fmt.Errorf("exceptions: %w", err)
		}
		if len(ps) > 0 || len(objs) > 0 || len(exs) == 0 {
			return nil, fmt.Errorf("exceptions: %s: %d policies.kyverno.io PolicyExceptions and %d other documents; want PolicyExceptions only", rel(f), len(exs), len(ps)+len(objs))
		}
		out = append(out, exs...)
	}
	return out, nil
}
