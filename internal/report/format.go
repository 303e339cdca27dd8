package report

import "fmt"

// Format is the report API a report is written in. Every path that writes
// reports (check and audit with -o json|yaml, the background audit in the
// cluster) writes OpenReports unless told otherwise.
type Format string

// The report formats tollgate writes.
const (
	// OpenReports is openreports.io/v1alpha1 Report and ClusterReport, the
	// Policy working group's successor API.
	OpenReports Format = "openreports"
	// WGPolicy is wgpolicyk8s.io/v1alpha2 PolicyReport and
	// ClusterPolicyReport, which many viewers still read.
	WGPolicy Format = "wgpolicyk8s"
)

// DefaultFormat is openreports. Policy Reporter 3.x (v3.9) reads both APIs,
// whichever CRDs the cluster has (cmd/run.go starts one informer per API
// found); Kyverno, Kubewarden and the Trivy adapter now write openreports
// or are moving to it, and wg-policy-prototypes, the home of wgpolicyk8s,
// is retired in its favour.
func DefaultFormat() Format { return OpenReports }

// FormatFlagHelp is the help of the flag that chooses a Format
// (--reports-api), the same on every command that writes reports.
const FormatFlagHelp = "openreports (openreports.io/v1alpha1 Report, ClusterReport) or wgpolicyk8s (wgpolicyk8s.io/v1alpha2 PolicyReport, ClusterPolicyReport)"

// ParseFormat reads a format's name as a flag or value gives it; "" is the
// default.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case OpenReports, WGPolicy:
		return f, nil
	case "":
		return DefaultFormat(), nil
	}
	return "", fmt.Errorf("unknown reports API %q: use %q (openreports.io/v1alpha1) or %q (wgpolicyk8s.io/v1alpha2)", s, OpenReports, WGPolicy)
}

// Group is the format's API group.
func (f Format) Group() string {
	if f == WGPolicy {
		return "wgpolicyk8s.io"
	}
	return "openreports.io"
}

// Version is the format's API version.
func (f Format) Version() string {
	if f == WGPolicy {
		return "v1alpha2"
	}
	return "v1alpha1"
}

// APIVersion is the reports' apiVersion.
func (f Format) APIVersion() string { return f.Group() + "/" + f.Version() }

// Kind is the kind of a namespaced report, or of a cluster-scoped one.
func (f Format) Kind(clusterScoped bool) string {
	switch {
	case f == WGPolicy && clusterScoped:
		return "ClusterPolicyReport"
	case f == WGPolicy:
		return "PolicyReport"
	case clusterScoped:
		return "ClusterReport"
	}
	return "Report"
}

// Source is the report-level source, a field only openreports has.
func (f Format) Source() string {
	if f == WGPolicy {
		return ""
	}
	return "tollgate"
}
