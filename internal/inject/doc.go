// Package inject is the pure core of sidecar injection: given a Pod as the
// apiserver sent it and the injection policies that match it, it computes the
// JSON Patch that adds their containers, init containers, volumes and image
// pull secrets. It does no I/O and knows nothing of HTTP.
package inject
