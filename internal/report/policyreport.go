// Package report presents check findings: a table for people, and a
// PolicyReport (wgpolicyk8s.io/v1alpha2) for dashboards and tools.
package report

import (
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/offline"
)

// PolicyReport follows wgpolicyk8s.io/v1alpha2, the shape Kyverno and
// policy-reporter read.
type PolicyReport struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Summary    Summary  `json:"summary"`
	Results    []Result `json:"results"`
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
}

// Resource is the object reference of a result.
type Resource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// ManifestPolicy is the policy name of results about a manifest tollgate
// could not turn into a request at all.
const ManifestPolicy = "tollgate/manifest"

// Build turns findings into a report.
func Build(findings []offline.Finding) *PolicyReport {
	r := &PolicyReport{APIVersion: "wgpolicyk8s.io/v1alpha2", Kind: "PolicyReport", Metadata: Metadata{Name: "tollgate-check"}, Results: []Result{}}
	for _, f := range findings {
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
			r.add(Result{Source: "tollgate", Policy: ManifestPolicy, Result: engine.Error, Message: f.Err.Error(), Resources: []Resource{res}, Properties: props})
			continue
		}
		for _, pr := range f.Results {
			p := props
			if pr.Exception != "" {
				p = map[string]string{"exception": pr.Exception}
				for k, v := range props {
					p[k] = v
				}
			}
			r.add(Result{Source: "tollgate", Policy: pr.Policy, Result: pr.Outcome, Message: pr.Message, Resources: []Resource{res}, Properties: p})
		}
	}
	return r
}

func (r *PolicyReport) add(res Result) {
	r.Results = append(r.Results, res)
	switch res.Result {
	case engine.Pass:
		r.Summary.Pass++
	case engine.Fail:
		r.Summary.Fail++
	case engine.Warn:
		r.Summary.Warn++
	case engine.Error:
		r.Summary.Error++
	case engine.Skip:
		r.Summary.Skip++
	}
}
