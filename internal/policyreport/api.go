// Package policyreport keeps a cluster's policy report objects equal to
// the background audit's findings: one aggregated report per namespace (and
// one cluster-scoped report for cluster-scoped objects), split into parts
// only when one would grow past a bound far under etcd's object limit, and
// written only when its content changes.
package policyreport

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// API is the report API the reports are written in.
type API string

// The report APIs tollgate writes.
const (
	// OpenReports is openreports.io/v1alpha1 Report and ClusterReport, the
	// Policy working group's successor API.
	OpenReports API = "openreports"
	// WGPolicy is wgpolicyk8s.io/v1alpha2 PolicyReport and
	// ClusterPolicyReport, which many viewers still read.
	WGPolicy API = "wgpolicyk8s"
)

// DefaultAPI is openreports. Policy Reporter 3.x (v3.9) reads both APIs,
// whichever CRDs the cluster has (cmd/run.go starts one informer per API
// found); Kyverno, Kubewarden and the Trivy adapter now write openreports
// or are moving to it, and wg-policy-prototypes, the home of wgpolicyk8s,
// is retired in its favour.
func DefaultAPI() API { return OpenReports }

// ParseAPI reads an API's name as a flag or value gives it.
func ParseAPI(s string) (API, error) {
	switch a := API(s); a {
	case OpenReports, WGPolicy:
		return a, nil
	case "":
		return DefaultAPI(), nil
	}
	return "", fmt.Errorf("unknown reports API %q: use %q (openreports.io/v1alpha1) or %q (wgpolicyk8s.io/v1alpha2)", s, OpenReports, WGPolicy)
}

// kind is one report kind of an API.
type kind struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// kinds are an API's namespaced and cluster-scoped report kinds.
func (a API) kinds() (namespaced, cluster kind) {
	if a == WGPolicy {
		gv := schema.GroupVersion{Group: "wgpolicyk8s.io", Version: "v1alpha2"}
		return kind{gv.WithResource("policyreports"), "PolicyReport", true}, kind{gv.WithResource("clusterpolicyreports"), "ClusterPolicyReport", false}
	}
	gv := schema.GroupVersion{Group: "openreports.io", Version: "v1alpha1"}
	return kind{gv.WithResource("reports"), "Report", true}, kind{gv.WithResource("clusterreports"), "ClusterReport", false}
}

// kindFor is the report kind for a namespace ("" for cluster-scoped objects).
func (a API) kindFor(namespace string) kind {
	ns, cl := a.kinds()
	if namespace == "" {
		return cl
	}
	return ns
}

// Resources are the API's report resources (namespaced, then
// cluster-scoped), for RBAC checks and watches.
func (a API) Resources() []schema.GroupVersionResource {
	ns, cl := a.kinds()
	return []schema.GroupVersionResource{ns.GVR, cl.GVR}
}
