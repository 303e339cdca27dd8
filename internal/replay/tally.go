package replay

import (
	"sort"
	"strings"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/tollgate-dev/tollgate/internal/engine"
)

// Summary is what a replay found.
type Summary struct {
	Files int `json:"files"`
	// Events read; Malformed lines are not among them.
	Events int `json:"events"`
	// OtherStages are events of stages before ResponseComplete (one request
	// logs up to three); NonResource are requests for no object (/healthz);
	// Reads are get, list and watch, which admission never sees.
	OtherStages int `json:"otherStages"`
	NonResource int `json:"nonResource"`
	Reads       int `json:"reads"`
	// Requests are the writes and connects admission saw; NotMatched the
	// ones no webhook of the policies would have been called for.
	Requests   int `json:"requests"`
	NotMatched int `json:"notMatched"`
	Replayed   int `json:"replayed"`
	Allowed    int `json:"allowed"`
	Denied     int `json:"denied"`
	Warned     int `json:"warned"`
	// NotReplayable are requests a policy could see whose request the log
	// does not hold, by reason.
	NotReplayable []*Reason `json:"notReplayable,omitempty"`
	// Malformed are lines that hold no event.
	Malformed []*Reason `json:"malformed,omitempty"`
	// UnknownNamespaces were looked up for a namespace selector or
	// namespaceObject, but the log does not show them created or changed
	// and none was given: policies saw only their name label.
	UnknownNamespaces []string `json:"unknownNamespaces,omitempty"`
	// Policies are the tallies of each policy that denied, warned, audited
	// or erred.
	Policies []*Tally `json:"policies"`
	Diff     *Diff    `json:"diff,omitempty"`

	reasons map[string]*Reason
}

// Reason counts the events set aside for one reason, with the first.
type Reason struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
	// First is where the first was, and its audit ID.
	First   string `json:"first"`
	AuditID string `json:"auditID,omitempty"`
}

func newSummary() *Summary { return &Summary{reasons: map[string]*Reason{}} }

// Skipped is how many events were set aside: malformed or not replayable.
func (s *Summary) Skipped() int {
	n := 0
	for _, r := range s.NotReplayable {
		n += r.Count
	}
	for _, r := range s.Malformed {
		n += r.Count
	}
	return n
}

func (s *Summary) notReplayable(reason, where string, ev *auditv1.Event) {
	if r := s.reasons[reason]; r != nil {
		r.Count++
		return
	}
	r := &Reason{Reason: reason, Count: 1, First: where, AuditID: string(ev.AuditID)}
	s.reasons[reason] = r
	s.NotReplayable = append(s.NotReplayable, r)
}

func (s *Summary) malformed(where string, err error) {
	reason := err.Error()
	if i := strings.Index(reason, ": "); i > 0 && len(reason) > 120 {
		reason = reason[:i] // a decoder's words name offsets that differ per line
	}
	key := "malformed: " + reason
	if r := s.reasons[key]; r != nil {
		r.Count++
		return
	}
	r := &Reason{Reason: reason, Count: 1, First: where}
	s.reasons[key] = r
	s.Malformed = append(s.Malformed, r)
}

func (s *Summary) count(o Outcome) {
	switch {
	case !o.Allowed:
		s.Denied++
	case len(o.Warnings) > 0:
		s.Warned++
		s.Allowed++
	default:
		s.Allowed++
	}
}

// Tally is what one policy did to the requests replayed.
type Tally struct {
	Policy  string `json:"policy"`
	Denied  int    `json:"denied"`
	Warned  int    `json:"warned"`
	Audited int    `json:"audited"`
	Errors  int    `json:"errors"`
	// By namespace, user and verb: the requests it denied, warned,
	// audited or erred on.
	ByNamespace map[string]int `json:"byNamespace"`
	ByUser      map[string]int `json:"byUser"`
	ByVerb      map[string]int `json:"byVerb"`
	Examples    []Example      `json:"examples"`
}

// Example is one request a policy acted on.
type Example struct {
	AuditID  string `json:"auditID"`
	Where    string `json:"where"`
	Verb     string `json:"verb"`
	Resource string `json:"resource"`
	Object   string `json:"object"`
	User     string `json:"user"`
	Result   string `json:"result"`
	Message  string `json:"message"`
	LiveCode int32  `json:"liveCode"`
	DryRun   bool   `json:"dryRun,omitempty"`
}

type tallies struct {
	examples int
	byPolicy map[string]*Tally
}

func newTallies(examples int) *tallies {
	return &tallies{examples: examples, byPolicy: map[string]*Tally{}}
}

// add counts the results of one request: a fail is a denial, a warn a
// warning (an audit when the policy's action is Audit), an error an error.
func (t *tallies) add(d *Decision, results []engine.Result) {
	for _, r := range results {
		kind := resultKind(r)
		if kind == "" {
			continue
		}
		p := t.byPolicy[r.Policy]
		if p == nil {
			p = &Tally{Policy: r.Policy, ByNamespace: map[string]int{}, ByUser: map[string]int{}, ByVerb: map[string]int{}}
			t.byPolicy[r.Policy] = p
		}
		switch kind {
		case "deny":
			p.Denied++
		case "warn":
			p.Warned++
		case "audit":
			p.Audited++
		case "error":
			p.Errors++
		}
		p.ByNamespace[d.Namespace]++
		p.ByUser[d.User]++
		p.ByVerb[d.Verb]++
		if len(p.Examples) < t.examples {
			p.Examples = append(p.Examples, Example{
				AuditID: d.AuditID, Where: d.Where, Verb: d.Verb, Resource: d.Resource, Object: d.subject(),
				User: d.User, Result: kind, Message: r.Message, LiveCode: d.Live.Code, DryRun: d.DryRun,
			})
		}
	}
}

func resultKind(r engine.Result) string {
	switch r.Outcome {
	case engine.Fail:
		return "deny"
	case engine.Warn:
		if strings.HasPrefix(r.Message, "audit: ") {
			return "audit"
		}
		return "warn"
	case engine.Error:
		return "error"
	}
	return ""
}

func (t *tallies) sorted() []*Tally {
	out := make([]*Tally, 0, len(t.byPolicy))
	for _, p := range t.byPolicy {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Policy < out[j].Policy })
	return out
}

// Diff is what deciding by the candidate set changes.
type Diff struct {
	// NewlyDenied were allowed and would be denied; NoLongerDenied the
	// reverse; MessageChanged denied by both in other words;
	// WarningsChanged allowed by both with other warnings.
	NewlyDenied     int `json:"newlyDenied"`
	NoLongerDenied  int `json:"noLongerDenied"`
	MessageChanged  int `json:"messageChanged"`
	WarningsChanged int `json:"warningsChanged"`
	// Examples are the first requests whose answer changes.
	Examples []DiffExample `json:"examples"`
	// Policies are the candidate's tallies, changed or not.
	Policies          []*Change `json:"policies"`
	CandidatePolicies []*Tally  `json:"candidatePolicies"`
}

// DiffExample is one request whose answer changes.
type DiffExample struct {
	AuditID  string  `json:"auditID"`
	Where    string  `json:"where"`
	Object   string  `json:"object"`
	Resource string  `json:"resource"`
	Verb     string  `json:"verb"`
	Change   string  `json:"change"`
	Before   Outcome `json:"before"`
	After    Outcome `json:"after"`
}

func (df *Diff) add(d *Decision, examples int) {
	a, b := d.Outcome, *d.Candidate
	change := ""
	switch {
	case a.Allowed && !b.Allowed:
		df.NewlyDenied++
		change = "newly denied"
	case !a.Allowed && b.Allowed:
		df.NoLongerDenied++
		change = "no longer denied"
	case !a.Allowed && a.Message != b.Message:
		df.MessageChanged++
		change = "message changed"
	case a.Allowed && strings.Join(a.Warnings, "\n") != strings.Join(b.Warnings, "\n"):
		df.WarningsChanged++
		change = "warnings changed"
	}
	if change != "" && len(df.Examples) < examples {
		df.Examples = append(df.Examples, DiffExample{
			AuditID: d.AuditID, Where: d.Where, Object: d.subject(), Resource: d.Resource, Verb: d.Verb,
			Change: change, Before: a, After: b,
		})
	}
}

// Change is one policy's tally before and after.
type Change struct {
	Policy string `json:"policy"`
	// Before and After count denials, warnings, audits and errors; a
	// policy only one set holds has zero on the other side.
	Before Counts `json:"before"`
	After  Counts `json:"after"`
}

// Counts are a tally's four counts.
type Counts struct {
	Denied  int `json:"denied"`
	Warned  int `json:"warned"`
	Audited int `json:"audited"`
	Errors  int `json:"errors"`
}

func countsOf(t *Tally) Counts {
	if t == nil {
		return Counts{}
	}
	return Counts{Denied: t.Denied, Warned: t.Warned, Audited: t.Audited, Errors: t.Errors}
}

// changes are the policies whose counts differ between the two sets.
func changes(before, after *tallies, _ int) []*Change {
	names := map[string]bool{}
	for n := range before.byPolicy {
		names[n] = true
	}
	for n := range after.byPolicy {
		names[n] = true
	}
	var out []*Change
	for n := range names {
		c := &Change{Policy: n, Before: countsOf(before.byPolicy[n]), After: countsOf(after.byPolicy[n])}
		if c.Before != c.After {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Policy < out[j].Policy })
	return out
}
