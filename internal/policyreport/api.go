// Package policyreport keeps a cluster's policy report objects equal to
// the background audit's findings: one aggregated report per namespace (and
// one cluster-scoped report for cluster-scoped objects), split into parts
// only when one would grow past a bound far under etcd's object limit, and
// written only when its content changes.
package policyreport

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/report"
)

// API is the report API the reports are written in: the format the CLI's
// reports take too (report.Format), so that every path writes the same one
// by default.
type API = report.Format

// The report APIs tollgate writes.
const (
	OpenReports = report.OpenReports
	WGPolicy    = report.WGPolicy
)

// DefaultAPI is report.DefaultFormat (openreports).
func DefaultAPI() API { return report.DefaultFormat() }

// ParseAPI reads an API's name as a flag or value gives it.
func ParseAPI(s string) (API, error) { return report.ParseFormat(s) }

// kind is one report kind of an API.
type kind struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// kinds are an API's namespaced and cluster-scoped report kinds.
func kinds(a API) (namespaced, cluster kind) {
	gv := schema.GroupVersion{Group: a.Group(), Version: a.Version()}
	if a == WGPolicy {
		return kind{gv.WithResource("policyreports"), a.Kind(false), true}, kind{gv.WithResource("clusterpolicyreports"), a.Kind(true), false}
	}
	return kind{gv.WithResource("reports"), a.Kind(false), true}, kind{gv.WithResource("clusterreports"), a.Kind(true), false}
}

// kindFor is the report kind for a namespace ("" for cluster-scoped objects).
func kindFor(a API, namespace string) kind {
	ns, cl := kinds(a)
	if namespace == "" {
		return cl
	}
	return ns
}
