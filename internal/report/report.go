// Package report presents check findings: a table for people, and a report
// object for dashboards and tools, in the format (Format) asked for:
// openreports.io/v1alpha1 by default, wgpolicyk8s.io/v1alpha2 on request.
package report

import (
	"maps"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/offline"
)

// Report is a report of either format: an openreports.io/v1alpha1
// Report or a wgpolicyk8s.io/v1alpha2 PolicyReport, whose summaries and
// results have the same shape (Policy Reporter reads both); openreports has
// a report-level source besides.
type Report struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Source     string   `json:"source,omitempty"`
	Summary    Summary  `json:"summary"`
	Results    []Result `json:"results"`
	// rows are every result in order, those of policies that did not apply
	// to a resource included, which only the table lists, on request
	// (TableOptions.ShowSkipped); notApplicable counts those.
	rows          []row
	notApplicable int
}

// row is a result of the table, and whether its policy applied.
type row struct {
	Result
	applies bool
}

// Metadata names the report.
type Metadata struct {
	Name string `json:"name"`
}

// Summary counts results by outcome.
type Summary struct {
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Warn  int `json:"warn"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
}

// Result is one policy's outcome for one resource.
type Result struct {
	Source     string            `json:"source"`
	Policy     string            `json:"policy"`
	Result     engine.Outcome    `json:"result"`
	Message    string            `json:"message,omitempty"`
	Resources  []Resource        `json:"resources"`
	Properties map[string]string `json:"properties,omitempty"`
	// Timestamp is when the result was first found as it is; the CLI's
	// reports leave it out.
	Timestamp *Timestamp `json:"timestamp,omitempty"`
}

// Timestamp is a report result's time (metav1.Timestamp's shape).
type Timestamp struct {
	Seconds int64 `json:"seconds"`
	Nanos   int32 `json:"nanos"`
}

// Resource is the object reference of a result.
type Resource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// UID is set for objects read from a cluster (the policyreport package).
	UID string `json:"uid,omitempty"`
}

// ManifestPolicy is the policy name of results about a manifest tollgate
// could not turn into a request at all.
const ManifestPolicy = "tollgate/manifest"

// Build turns findings into a report of the given format. A policy that did not apply to a
// resource (engine.Result.Applies) has no result in it: it was not checked
// there, which neither pass nor skip would say; the table lists it on
// request. A skip by a PolicyException, or of a policy whose verdict
// depends on the request (audit), is a result.
func Build(findings []offline.Finding, format Format) *Report {
	r := &Report{
		APIVersion: format.APIVersion(), Kind: format.Kind(false), Metadata: Metadata{Name: "tollgate-check"},
		Source: format.Source(), Results: []Result{},
	}
	for _, f := range findings {
		for _, rw := range rows(f) {
			r.rows = append(r.rows, rw)
			if !rw.applies {
				r.notApplicable++
				continue
			}
			r.Results = append(r.Results, rw.Result)
			r.Summary.Add(rw.Result.Result)
		}
	}
	return r
}

// Results are the report results of one finding: one per policy that
// applied to it, or one error result when the manifest could not be
// evaluated at all.
func Results(f offline.Finding) []Result {
	var out []Result
	for _, rw := range rows(f) {
		if rw.applies {
			out = append(out, rw.Result)
		}
	}
	return out
}

// rows are the results of one finding, one per policy.
func rows(f offline.Finding) []row {
	o := f.Object
	res := Resource{APIVersion: o.GVK.GroupVersion().String(), Kind: o.GVK.Kind, Namespace: o.Namespace, Name: o.Name}
	if res.Name == "" {
		res.Name = o.GenerateName
	}
	var props map[string]string
	if o.File != "" { // a manifest, not an object read from a cluster
		props = map[string]string{"file": o.Where()}
	}
	if f.Err != nil {
		return []row{{Result: Result{Source: "tollgate", Policy: ManifestPolicy, Result: engine.Error, Message: f.Err.Error(), Resources: []Resource{res}, Properties: props}, applies: true}}
	}
	out := make([]row, 0, len(f.Results))
	for _, pr := range f.Results {
		p := props
		if pr.Exception != "" || pr.Binding != "" || pr.Origin != "" {
			p = maps.Clone(props)
			if p == nil {
				p = map[string]string{}
			}
			for k, v := range map[string]string{"exception": pr.Exception, "binding": pr.Binding, "origin": pr.Origin} {
				if v != "" {
					p[k] = v
				}
			}
		}
		out = append(out, row{Result: Result{Source: "tollgate", Policy: pr.Policy, Result: pr.Outcome, Message: pr.Message, Resources: []Resource{res}, Properties: p}, applies: pr.Applies()})
	}
	return out
}

// Add counts one result's outcome.
func (s *Summary) Add(o engine.Outcome) {
	switch o {
	case engine.Pass:
		s.Pass++
	case engine.Fail:
		s.Fail++
	case engine.Warn:
		s.Warn++
	case engine.Error:
		s.Error++
	case engine.Skip:
		s.Skip++
	}
}
