// Package admission is tollgate's version-neutral model of an admission review.
//
// The kube-apiserver speaks admission.k8s.io/v1 and v1beta1; both decode into
// the same Request and are answered from the same Response (codec.go), so the
// policy code never sees a wire version. Handlers (handler.go) turn a Request
// into a Response; response.go has the helpers that build the common answers.
package admission
