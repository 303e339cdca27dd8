// Package admission is tollgate's version-neutral model of an admission review.
//
// The kube-apiserver speaks admission.k8s.io/v1 and v1beta1; both decode into
// the same Request (request.go) and are answered from the same Response
// (codec.go), so the policy code never sees a wire version. A request's
// objects stay raw JSON; meta.go reads and checks their metadata once, and
// valid.go says whether bytes are JSON as the apiserver accepts it. Handlers
// (handler.go) turn a Request into a Response; response.go has the helpers
// that build the common answers, and sanitize.go bounds the text they carry
// to users. log.go carries a request's logger in its context.
package admission
