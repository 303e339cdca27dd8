// Package policy owns tollgate's policy files: their types (types.go), how
// they are read and verified (load.go, verify.go) and compiled at load
// (compile.go), Kubernetes ValidatingAdmissionPolicies and their bindings
// read from the same files (vap.go) or from the cluster's API (cluster.go),
// the verified set and what it verifies across policies (set.go), the
// embedded defaults (defaults.go), which requests a policy concerns
// (match.go), namespaces as selectors see them (namespaces.go), how
// policies are grouped into webhook entries and the kinds of groups
// (group.go), and reloading the files when they change (watch.go).
package policy
