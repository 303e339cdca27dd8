// Package policy is the set of policies tollgate loads. It reads them
// from files, strictly, or from the cluster's API. It owns tollgate's own
// format: its types, verification and compiling. Other kinds it takes from
// the packages that own them: Kubernetes' ValidatingAdmissionPolicies
// with their bindings, MutatingAdmissionPolicies (internal/mutatingpolicy)
// and Kyverno's ValidatingPolicies (internal/kyverno). It joins bindings
// and PolicyExceptions to their policies.
//
// A Set is what one load verified. It splits into Groups: policies of one
// kind, action and match, each one webhook entry. The package also says
// which requests a policy concerns, and watches the files for changes.
package policy
