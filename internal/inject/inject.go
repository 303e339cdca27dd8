package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Params is the input of an injection: the Pod read from the request's raw
// object, the injection policies that match the request, in order, and the
// labels of the Pod's namespace, which say where a policy lets Pods opt out.
type Params struct {
	Pod             *Pod
	Policies        []*policy.Policy
	Namespace       string
	NamespaceLabels map[string]string
}

// Result is what injection decided.
type Result struct {
	// Patch applies to the raw object the Pod was decoded from.
	Patch jsonpatch.Patch
	// Effects say, for each policy, what became of it.
	Effects []Effect
}

// State is what became of one injection policy.
type State int

// The states of an injection policy for one Pod.
const (
	// Applied: the patch adds the policy's items.
	Applied State = iota
	// Present: the Pod already has the policy's items (or its status says so).
	Present
	// Clash: the Pod has an item of the same name with other content; the
	// policy is skipped and Message is a warning for the user.
	Clash
	// OptedOut: the Pod's annotation refused the policy, which allows that
	// in the Pod's namespace.
	OptedOut
)

// Effect is what became of one policy. Warning, when set, is for the user
// who made the request.
type Effect struct {
	Policy  string
	State   State
	Message string
	Warning string
}

// Applied names the policies whose items the patch adds.
func (r *Result) Applied() []string { return r.names(Applied) }

// Warnings are the warnings of the outcomes, for the admission response.
func (r *Result) Warnings() []string {
	var out []string
	for _, o := range r.Effects {
		if o.Warning != "" {
			out = append(out, o.Warning)
		}
	}
	return out
}

func (r *Result) names(s State) []string {
	var out []string
	for _, o := range r.Effects {
		if o.State == s {
			out = append(out, o.Policy)
		}
	}
	return out
}

// list identifies one of the Pod lists injection adds to.
type list int

const (
	initContainers list = iota
	containers
	volumes
	imagePullSecrets
)

var listPath = [...]string{"initContainers", "containers", "volumes", "imagePullSecrets"}

// Inject computes the patch that gives the Pod the items of every policy it
// has not yet received. It is idempotent: the status annotation and the
// names already present keep a second run from adding anything.
func Inject(p Params) Result {
	pod := p.Pod
	optOut := optedOut(pod.Annotations.OptOut)
	status := parseStatus(pod.Annotations.Status)
	pt := newPodItems(pod)
	var res Result
	var add [4][]policy.Item
	recorded := append([]string(nil), status...)
	for _, pol := range p.Policies {
		var warning string
		if optOut {
			if pol.AllowsOptOut(p.NamespaceLabels) {
				res.Effects = append(res.Effects, Effect{Policy: pol.Name(), State: OptedOut, Message: "the pod opts out with " + OptOutAnnotation})
				continue
			}
			warning = fmt.Sprintf("tollgate: policy %s does not allow opting out with %s in namespace %s; the pod gets its injection", pol.Name(), OptOutAnnotation, p.Namespace)
		}
		if slices.Contains(status, pol.Name()) {
			res.Effects = append(res.Effects, Effect{Policy: pol.Name(), State: Present, Message: "recorded in " + StatusAnnotation})
			continue
		}
		in := pol.Injection()
		missing, clash := pt.missing(in)
		if clash != "" {
			msg := fmt.Sprintf("tollgate: policy %s not injected: %s", pol.Name(), clash)
			res.Effects = append(res.Effects, Effect{Policy: pol.Name(), State: Clash, Message: msg, Warning: msg})
			continue
		}
		var added []string
		for l, items := range missing {
			for _, it := range items {
				pt.plan(list(l), it)
				add[l] = append(add[l], it)
				added = append(added, singular[l]+" "+it.Name)
			}
		}
		recorded = append(recorded, pol.Name())
		if len(added) > 0 {
			res.Effects = append(res.Effects, Effect{Policy: pol.Name(), State: Applied, Message: "adds " + strings.Join(added, ", "), Warning: warning})
		} else {
			res.Effects = append(res.Effects, Effect{Policy: pol.Name(), State: Present, Message: "the pod already has every item"})
		}
	}
	for l, items := range add {
		res.Patch = append(res.Patch, listOps(list(l), pt.length(list(l)), items)...)
	}
	if len(res.Patch) > 0 && !pod.HasSpec {
		res.Patch = append(jsonpatch.Patch{jsonpatch.Add("/spec", json.RawMessage("{}"))}, res.Patch...)
	}
	if next := formatStatus(recorded); next != formatStatus(status) {
		if !pod.HasMetadata {
			res.Patch = append(res.Patch, jsonpatch.Add("/metadata", json.RawMessage("{}")))
		}
		res.Patch = append(res.Patch, annotationOp(pod.Annotations.Any, StatusAnnotation, next))
	}
	return res
}

// listOps adds items to a Pod list that has length entries: the whole list
// when it is missing or empty, init containers ahead of the Pod's own, and
// everything else after them.
func listOps(l list, length int, items []policy.Item) jsonpatch.Patch {
	if len(items) == 0 {
		return nil
	}
	if length == 0 {
		return jsonpatch.Patch{jsonpatch.Add(jsonpatch.Pointer("spec", listPath[l]), jsonArray(items))}
	}
	ops := make(jsonpatch.Patch, len(items))
	for i, it := range items {
		pos := "-"
		if l == initContainers {
			pos = fmt.Sprint(i)
		}
		ops[i] = jsonpatch.Add(jsonpatch.Pointer("spec", listPath[l], pos), it.JSON)
	}
	return ops
}

// annotationOp sets one annotation, keeping every other: the whole map is
// created only when the Pod has none.
func annotationOp(existing bool, key, value string) jsonpatch.Op {
	v, _ := json.Marshal(value)
	if !existing {
		m, _ := json.Marshal(map[string]string{key: value})
		return jsonpatch.Add(jsonpatch.Pointer("metadata", "annotations"), m)
	}
	return jsonpatch.Add(jsonpatch.Pointer("metadata", "annotations", key), v)
}

func jsonArray(items []policy.Item) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it.JSON)
	}
	b.WriteByte(']')
	return b.Bytes()
}
