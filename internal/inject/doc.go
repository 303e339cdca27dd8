// Package inject is the pure core of sidecar injection: given a Pod as the
// apiserver sent it and the injection policies that match it, it computes the
// JSON Patch that adds their containers, init containers, volumes and image
// pull secrets (inject.go), and what became of each policy. It reads only the
// parts of the Pod it needs (pod.go), adds no name twice and skips items the
// Pod already holds (poditems.go, subset.go), honours the Pod's opt-out
// annotation where a policy lets it, and records what the Pod received in a
// status annotation (annotations.go). It does no I/O and knows nothing of
// HTTP.
package inject
