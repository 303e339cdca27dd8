// Package inject is the pure core of sidecar injection. Given a Pod as the
// apiserver sent it and the injection policies that match it, it computes
// the JSON Patch that adds their containers, init containers, volumes and
// image pull secrets, and says what became of each policy.
//
// It reads only the parts of the Pod it needs. It adds no name twice and
// skips items the Pod already holds. It honours the Pod's opt-out
// annotation where a policy allows it, and records what the Pod received in
// a status annotation. It does no I/O and knows nothing of HTTP.
package inject
