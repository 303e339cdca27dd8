// Package admission is tollgate's model of an admission review, the same
// for every wire version.
//
// The kube-apiserver speaks admission.k8s.io/v1 and v1beta1. Both decode
// into one Request and are answered from one Response, so policy code never
// sees a wire version. A request's objects stay raw JSON; their metadata is
// read and checked once. A Handler turns a Request into a Response. The
// package also builds the common answers, bounds the text they carry to
// users, and carries a request's logger in its context.
package admission
