package policyreport

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/jsonscan"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/report"
)

// Bounds of one report object. etcd refuses objects over 1.5 MiB
// (--max-request-bytes); a report stays under maxReportBytes of results,
// which leaves half a MiB for metadata and managedFields.
//
// DefaultMaxResults: a typical result (a Deployment in a namespace, a
// policy name, a one-line message, uid and timestamp) is about 340 bytes of
// JSON (TestResultSize measures it), so 1,000 results are about 0.33 MiB:
// small enough for viewers to list and for each write to stay cheap, and a
// namespace with 10 policies has 100 objects per report. Results with long
// messages split earlier, at maxReportBytes (about 320 results of 3 KiB
// messages); messages are cut at maxMessageBytes (admission.Sanitize, as
// warnings are) so that no result can fill a report alone.
const (
	DefaultMaxResults = 1000
	maxReportBytes    = 1 << 20
	maxMessageBytes   = 4096
)

// body is what a report holds besides its metadata, in the JSON shape both
// APIs share. Source is the report-level field only openreports has.
type body struct {
	Source  string          `json:"source,omitempty"`
	Summary report.Summary  `json:"summary"`
	Results []report.Result `json:"results,omitempty"`
}

// results turns findings into report results, sorted by object then policy
// so that equal findings give equal reports.
func results(findings []offline.Finding) []report.Result {
	var out []report.Result
	for _, f := range findings {
		// Read without parsing: fastjson refuses objects nested deeper
		// than 300 levels, which the apiserver stores.
		uid := jsonscan.String(jsonscan.Members(jsonscan.Members(f.Object.JSON, "metadata")[0], "uid")[0])
		for _, r := range report.Results(f) {
			r.Resources[0].UID = uid
			r.Message = admission.Sanitize(r.Message, maxMessageBytes)
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b report.Result) int {
		ra, rb := a.Resources[0], b.Resources[0]
		return cmp.Or(
			cmp.Compare(ra.Namespace, rb.Namespace),
			cmp.Compare(ra.Kind, rb.Kind),
			cmp.Compare(ra.APIVersion, rb.APIVersion),
			cmp.Compare(ra.Name, rb.Name),
			cmp.Compare(ra.UID, rb.UID),
			cmp.Compare(a.Policy, b.Policy),
			cmp.Compare(a.Result, b.Result),
			cmp.Compare(a.Message, b.Message),
		)
	})
	return out
}

// resultKey identifies a result across syncs: its object and policy.
func resultKey(r *report.Result) string {
	o := r.Resources[0]
	return o.APIVersion + "/" + o.Kind + "/" + o.Namespace + "/" + o.Name + "/" + o.UID + "/" + r.Policy
}

// stamp gives each result a timestamp: the one it had in a previous report
// if it is unchanged there, now otherwise.
func stamp(rs []report.Result, previous map[string]report.Result, now time.Time) {
	ts := &report.Timestamp{Seconds: now.Unix()}
	for i := range rs {
		if old, ok := previous[resultKey(&rs[i])]; ok && old.Timestamp != nil && sameResult(old, rs[i]) {
			t := *old.Timestamp
			rs[i].Timestamp = &t
			continue
		}
		rs[i].Timestamp = ts
	}
}

// sameResult compares two results but for their timestamps.
func sameResult(a, b report.Result) bool {
	a.Timestamp, b.Timestamp = nil, nil
	aj, err1 := json.Marshal(a)
	bj, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(aj) == string(bj)
}

// split cuts sorted results into report bodies of at most max results and
// maxReportBytes of results each.
func split(rs []report.Result, max int, api API) ([]body, error) {
	var parts []body
	var cur body
	size := 0
	for _, r := range rs {
		js, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("result of %s for %s: %w", r.Policy, r.Resources[0].Name, err)
		}
		if len(cur.Results) > 0 && (len(cur.Results) >= max || size+len(js)+1 > maxReportBytes) {
			parts = append(parts, cur)
			cur, size = body{}, 0
		}
		cur.Results = append(cur.Results, r)
		cur.Summary.Add(r.Result)
		size += len(js) + 1
	}
	if len(cur.Results) > 0 {
		parts = append(parts, cur)
	}
	for i := range parts {
		parts[i].Source = api.Source()
	}
	return parts, nil
}

// partName is the name of a namespace's i-th report (from 0): tollgate,
// tollgate-2, tollgate-3...
func partName(i int) string {
	if i == 0 {
		return "tollgate"
	}
	return "tollgate-" + strconv.Itoa(i+1)
}
