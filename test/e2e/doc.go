// Package e2e proves tollgate against a real kube-apiserver and etcd, built
// from the Go module proxy (hack/tools) and started by envtest. The tests
// build the tollgate binary, run `tollgate serve`, register it with the
// output of `tollgate manifests`, and drive everything through the apiserver.
//
// They need the build tag e2e and KUBEBUILDER_ASSETS; `make e2e` provides both.
package e2e
