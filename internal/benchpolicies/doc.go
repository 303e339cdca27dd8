// Package benchpolicies builds the policy sets tollgate's benchmarks
// evaluate, so that make bench (hack/bench) and the Go benchmarks of
// internal/engine measure the same groups: twenty policies of a webhook
// group, the library's whole Pod group, and n field checks on one path.
package benchpolicies
