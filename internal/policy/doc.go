// Package policy owns the policies tollgate loads: tollgate's own format,
// Kubernetes' ValidatingAdmissionPolicies and MutatingAdmissionPolicies with
// their bindings, and Kyverno's ValidatingPolicies. It reads them from
// files, strictly, or from the cluster's API, verifies and compiles them,
// and joins PolicyExceptions to them.
//
// A Set is what one load verified. It splits into Groups: policies of one
// kind, action and match, each one webhook entry. The package also says
// which requests a policy concerns, how namespaces look to selectors, and
// watches the files for changes.
package policy
