package cel

import (
	"context"
	"reflect"
	"sync/atomic"
	"unsafe"

	"github.com/google/cel-go/interpreter"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"

	"github.com/google/cel-go/common/types"

	"github.com/tollgate-dev/tollgate/internal/cel/bound"
	"github.com/tollgate-dev/tollgate/internal/cel/fastpath"
)

// The tracked path's side of the fast path (package fastpath): what it
// reads of an input (fastInput, built once per input), the untracked
// evaluation it runs in this package's activation (untrackedEval), and
// the decisions worded from its answer as the validator words them.

// decideFast asks the fast path to decide the policy: its decisions, nil
// when the tracked path must decide (or the input asks for it alone).
func (p *Program) decideFast(ctx context.Context, in *Input) []validating.PolicyDecision {
	// The fast path reads the objects' documents, which objects nested too
	// deep to be read lazily have none of (Check, deep).
	if p.fast == nil || in.TrackedOnly || ctx.Err() != nil || in.Check() != nil || in.deep {
		return nil
	}
	fi := in.fastInput()
	// The direct evaluator reads the documents alone, not the CEL values
	// of the objects, request and namespace (values), made only if cel-go
	// must evaluate.
	if !fi.ok {
		return nil
	}
	denied, how := p.fast.Decide(&fi.review, func() (fastpath.Evaluation, bool) {
		r := in.values()
		if r.err != nil {
			return nil, false
		}
		e := &policyEval{ctx: ctx, p: p, r: r, untracked: true, shared: fi.shared}
		return &untrackedEval{e: e, c: e.newContext()}, true
	})
	if p.counts != nil {
		p.counts.add(how)
	}
	switch how {
	case fastpath.GaveWay:
		return nil
	case fastpath.DirectDeny:
		return p.denials(denied)
	}
	return p.admitted
}

// denials are the decisions of a policy whose rules in denied are false
// and the others true, their messages worded as the validator words them.
func (p *Program) denials(denied []fastpath.Denial) []validating.PolicyDecision {
	d := make([]validating.PolicyDecision, len(p.rules))
	copy(d, p.admitted)
	for _, x := range denied {
		i := x.Rule
		validation := p.rules[i].ExpressionAccessor.(*validating.ValidationCondition)
		var result *plugincel.EvaluationResult
		if x.HasMessage {
			result = &plugincel.EvaluationResult{EvalResult: types.String(x.Message)}
		}
		d[i].Action, d[i].Evaluation = validating.ActionDeny, validating.EvalDeny
		d[i].Reason = metav1.StatusReasonInvalid
		if validation.Reason != nil {
			d[i].Reason = *validation.Reason
		}
		d[i].Message = denialMessage(validation, result)
	}
	return d
}

// admitted are the decisions of a policy whose every rule admits, made
// once per program (Compile): read, never written.
func admitted(rules int) []validating.PolicyDecision {
	d := make([]validating.PolicyDecision, rules)
	for i := range d {
		d[i].Action, d[i].Evaluation = validating.ActionAdmit, validating.EvalAdmit
	}
	return d
}

// untrackedEval is the fast path's evaluation of a policy's untracked
// programs in this package's activation, variables untracked.
type untrackedEval struct {
	e *policyEval
	c *varContext
}

func (u *untrackedEval) Activation() interpreter.Activation { return u.c.act }
func (u *untrackedEval) Failed() bool                       { return u.e.failed || u.c.act.offPath }
func (u *untrackedEval) Known(walk bool) []bound.Known      { return u.e.p.knownSizes(u.e.done, walk) }

// knownSizes are the known sizes of the variables evaluated without error
// in done, by the program's variables' order, nested ones only if walk.
func (p *Program) knownSizes(done map[string]*varResult, walk bool) []bound.Known {
	out := make([]bound.Known, len(p.variables))
	for i, v := range p.variables {
		if r := done[v.name]; r != nil && r.err == nil && !r.noDetail && !r.noCost && r.val != nil {
			out[i] = bound.ValueSizes(r.val, walk)
		}
	}
	return out
}

// counts are how the fast path decided a program's evaluations, kept
// only when a test asks (Program.counts): off the request path otherwise.
type counts struct {
	// admits counts the evaluations the fast path admitted, direct those
	// the direct evaluator did, denials those it denied.
	admits, direct, denials atomic.Int64
}

func (c *counts) add(how fastpath.How) {
	switch how {
	case fastpath.DirectAdmit:
		c.admits.Add(1)
		c.direct.Add(1)
	case fastpath.UntrackedAdmit:
		c.admits.Add(1)
	case fastpath.DirectDeny:
		c.denials.Add(1)
	}
}

// fastInput is what the fast path reads of an input, built once per input
// and shared by its policies: its review (documents, request fields,
// sizes), and the untracked values of the variables that read nothing but
// the review (by expression text). It remembers which objects it was made
// for: a copy (As) about other objects makes its own.
type fastInput struct {
	obj, old         runtime.Object
	objJSON, oldJSON []byte
	kind             schema.GroupVersionKind
	resource         schema.GroupVersionResource
	ok               bool
	review           fastpath.Review // held here: one allocation per input, not two
	shared           map[string]*varResult
}

func (in *Input) fastInput() *fastInput {
	if f := in.fast; f != nil && f.kind == in.Kind && f.resource == in.Resource && sameObject(f.obj, in.Object) &&
		sameObject(f.old, in.OldObject) && sameBytes(f.objJSON, in.ObjectJSON) && sameBytes(f.oldJSON, in.OldObjectJSON) {
		return f
	}
	f := &fastInput{obj: in.Object, old: in.OldObject, objJSON: in.ObjectJSON, oldJSON: in.OldObjectJSON,
		kind: in.Kind, resource: in.Resource, shared: map[string]*varResult{}}
	st, ok := inputStats(in)
	f.ok = ok
	f.review = fastpath.Review{Docs: in.docs, Stats: st,
		Decoded:   (in.docs[0] == nil && in.Object != nil) || (in.docs[1] == nil && in.OldObject != nil),
		Namespace: in.Namespace, Name: in.Name, Operation: in.Operation, SubResource: in.SubResource}
	in.fast = f
	return f
}

// inputStats are the review's sizes (bound.Stats) for the bound: the
// largest list length, map size and string length in object, oldObject,
// request and namespaceObject. ok false when an object is of a kind they
// cannot be read from (then no fast path).
func inputStats(in *Input) (bound.Stats, bool) {
	var st bound.Stats
	if (in.ObjectJSON != nil || in.OldObjectJSON != nil) && in.Check() != nil {
		return bound.Stats{}, false // evaluating fails
	}
	for i, o := range []struct {
		raw []byte
		obj runtime.Object
	}{{in.ObjectJSON, in.Object}, {in.OldObjectJSON, in.OldObject}} {
		var s bound.Stats
		switch u, isU := o.obj.(*unstructured.Unstructured); {
		case o.raw != nil:
			if d := in.docs[i]; d != nil { // the sizes Check read
				s = bound.StatsOf(d.Sizes)
			}
		case o.obj == nil:
		case isU && u != nil:
			s = bound.ObjectStats(u.Object)
		default:
			return bound.Stats{}, false
		}
		st = bound.Max(st, s)
	}
	st = bound.Max(st, bound.RequestStats(in.User, in.Kind.Group, in.Kind.Version, in.Kind.Kind, in.Resource.Group,
		in.Resource.Version, in.Resource.Resource, in.SubResource, in.Name, in.Namespace, in.Operation))
	if in.NamespaceObject != nil {
		st = bound.Max(st, bound.NamespaceStats(in.NamespaceObject))
	}
	return st, true
}

// sameObject tells whether a and b are the same pointer (or both nil).
func sameObject(a, b runtime.Object) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Type() == vb.Type() && va.Kind() == reflect.Pointer && va.Pointer() == vb.Pointer()
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (a == nil) == (b == nil) && unsafe.SliceData(a) == unsafe.SliceData(b)
}
