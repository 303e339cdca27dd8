// Package replay runs the apiserver's audit log through policies: for each
// write the log records, it rebuilds the admission request the webhooks
// saw (its object from the event, its old object from the object's earlier
// events) and decides it with the engine every other path uses, one event
// at a time, in the log's order. What a policy would deny, warn or audit
// is tallied by namespace, user and verb; with a candidate set, so is what
// a change of policy would change.
package replay

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Config is what a replay runs.
type Config struct {
	// Set holds the policies; Candidate, when set, a second set every
	// event is also decided by, to compare.
	Set, Candidate *policy.Set
	// Engine are the engines' options; Namespaces is replay's own.
	Engine engine.Options
	// Namespaces are labels of namespaces the log may not show created.
	Namespaces map[string]map[string]string
	// Examples is how many events each tally keeps; 5 unless set.
	Examples int
	// Decided, when set, is called for every event replayed.
	Decided func(*Decision)
	// Findings keeps, for Findings, each object's last request replayed
	// (dry runs and CONNECTs aside): what a report of them needs.
	Findings bool
}

// Replayer replays logs; it holds the store of objects between them.
type Replayer struct {
	cfg             Config
	eng, candidate  *engine.Engine
	store           *store
	match           *matcher
	summary         *Summary
	policies, other *tallies
	findings        map[objectKey]offline.Finding
}

// New builds the engines; their namespace lookups read the log's namespaces.
func New(cfg Config) (*Replayer, error) {
	if cfg.Examples <= 0 {
		cfg.Examples = 5
	}
	m, err := newMatcher(cfg.Set, cfg.Candidate)
	if err != nil {
		return nil, err
	}
	r := &Replayer{cfg: cfg, match: m, summary: newSummary(), policies: newTallies(cfg.Examples)}
	r.store = newStore(cfg.Namespaces, m.keeps)
	if cfg.Findings {
		r.findings = map[objectKey]offline.Finding{}
	}
	opts := cfg.Engine
	opts.Namespaces = r.store.namespace
	r.eng = engine.New(cfg.Set, opts)
	if cfg.Candidate != nil {
		r.candidate = engine.New(cfg.Candidate, opts)
		r.other = newTallies(cfg.Examples)
		r.summary.Diff = &Diff{}
	}
	return r, nil
}

// ReadFile replays one file (or "-", stdin) in order, and says how many
// lines it held that were events or malformed. Its error is for a file
// that cannot be read; bad lines are counted in the summary.
func (r *Replayer) ReadFile(ctx context.Context, file string, stdin io.Reader) (int, error) {
	var stop error
	lines := 0
	_, err := Read(file, stdin, func(l Line) {
		if stop != nil {
			return
		}
		if stop = ctx.Err(); stop != nil {
			return
		}
		lines++
		r.line(ctx, l)
	})
	r.summary.Files++
	return lines, errors.Join(err, stop)
}

func (r *Replayer) line(ctx context.Context, l Line) {
	s := r.summary
	if l.Err != nil {
		s.malformed(l.Where, l.Err)
		return
	}
	s.Events++
	ev := l.Event
	if ev.Stage != auditv1.StageResponseComplete {
		s.OtherStages++
		return
	}
	if ev.ObjectRef == nil || ev.ObjectRef.Resource == "" {
		s.NonResource++
		return
	}
	op := operation(ev)
	if op == "" {
		s.Reads++
		return
	}
	s.Requests++
	defer r.store.record(ev, string(op))
	if !r.match.any(ev, op) {
		s.NotMatched++
		return
	}
	req, gvk, err := build(ev, op, r.store.old(ev))
	var why *notReplayable
	if errors.As(err, &why) {
		s.notReplayable(why.reason, l.Where, ev)
		return
	} else if err != nil {
		s.notReplayable(err.Error(), l.Where, ev)
		return
	}
	d := newDecision(l.Where, ev, req)
	f := offline.Decide(ctx, r.eng, clone(req), gvk)
	if f.Err != nil {
		s.notReplayable("the mutated object does not decode: "+f.Err.Error(), l.Where, ev)
		return
	}
	s.Replayed++
	d.Outcome = outcomeOf(&f)
	s.count(d.Outcome)
	r.policies.add(d, f.Results)
	if r.findings != nil {
		r.keepFinding(l.Where, ev, req, gvk, f)
	}
	if r.candidate != nil {
		cf := offline.Decide(ctx, r.candidate, req, gvk)
		c := outcomeOf(&cf)
		if cf.Err != nil {
			c = Outcome{Allowed: false, Message: cf.Err.Error()}
		}
		d.Candidate = &c
		r.other.add(d, cf.Results)
		s.Diff.add(d, r.cfg.Examples)
	}
	if r.cfg.Decided != nil {
		r.cfg.Decided(d)
	}
}

// Summary is the replay's result so far: counts, and the tallies sorted.
func (r *Replayer) Summary() *Summary {
	r.summary.Policies = r.policies.sorted()
	r.summary.UnknownNamespaces = slices.Sorted(maps.Keys(r.store.unknown))
	if r.other != nil {
		r.summary.Diff.Policies = changes(r.policies, r.other, r.cfg.Examples)
		r.summary.Diff.CandidatePolicies = r.other.sorted()
	}
	return r.summary
}

// keepFinding keeps an object's last finding, or drops it once deleted.
func (r *Replayer) keepFinding(where string, ev *auditv1.Event, req *admission.Request, gvk schema.GroupVersionKind, f offline.Finding) {
	if req.DryRun || req.Operation == admission.Connect {
		return
	}
	key := keyOf(ev.ObjectRef)
	key.name = req.Name
	if req.Operation == admission.Delete {
		delete(r.findings, key)
		return
	}
	file, line := where, 0
	if i := strings.LastIndexByte(where, ':'); i > 0 {
		file = where[:i]
		line, _ = strconv.Atoi(where[i+1:])
	}
	f.Object = &manifest.Object{File: file, Line: line, JSON: req.Object(), GVK: gvk, Namespace: req.Namespace, Name: req.Name}
	r.findings[key] = f
}

// Findings are the objects' last findings (Config.Findings), sorted by
// resource, namespace and name.
func (r *Replayer) Findings() []offline.Finding {
	keys := make([]objectKey, 0, len(r.findings))
	for k := range r.findings {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.resource != b.resource {
			return a.resource.String() < b.resource.String()
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.name < b.name
	})
	out := make([]offline.Finding, len(keys))
	for i, k := range keys {
		out[i] = r.findings[k]
	}
	return out
}

// clone is a request with the same objects, for a second engine: Decide
// sets the mutated object on the request it is given.
func clone(req *admission.Request) *admission.Request {
	c := *req
	c.SetObjects(req.Object(), req.OldObject())
	return &c
}

// Outcome is the answer an engine gives a request.
type Outcome struct {
	Allowed  bool     `json:"allowed"`
	Message  string   `json:"message,omitempty"`
	Denials  []string `json:"denials,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Mutated: a policy changed the object.
	Mutated bool `json:"mutated,omitempty"`
}

func outcomeOf(f *offline.Finding) Outcome {
	return Outcome{Allowed: f.Allowed, Message: f.Message, Denials: f.Denials, Warnings: f.Warnings, Mutated: f.Patched != nil}
}

// Decision is one event replayed.
type Decision struct {
	AuditID   string `json:"auditID"`
	Where     string `json:"where"`
	Verb      string `json:"verb"`
	Operation string `json:"operation"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	User      string `json:"user"`
	DryRun    bool   `json:"dryRun,omitempty"`
	Outcome   `json:",inline"`
	Candidate *Outcome `json:"candidate,omitempty"`
	Live      Live     `json:"live"`
}

// Live is what the apiserver answered, as the log says.
type Live struct {
	Code    int32  `json:"code"`
	Message string `json:"message,omitempty"`
}

func newDecision(where string, ev *auditv1.Event, req *admission.Request) *Decision {
	resource := req.Resource.Resource
	if req.Resource.Group != "" {
		resource += "." + req.Resource.Group
	}
	if req.SubResource != "" {
		resource += "/" + req.SubResource
	}
	d := &Decision{
		AuditID: string(ev.AuditID), Where: where, Verb: ev.Verb, Operation: string(req.Operation),
		Resource: resource, Namespace: ev.ObjectRef.Namespace, Name: req.Name,
		User: req.UserInfo.Username, DryRun: req.DryRun,
	}
	if st := ev.ResponseStatus; st != nil {
		d.Live = Live{Code: st.Code, Message: st.Message}
	}
	return d
}

// subject names a decision's object for people.
func (d *Decision) subject() string {
	return strings.TrimPrefix(d.Namespace+"/"+d.Name, "/")
}
