package admission

import (
	"fmt"
	"net/http"

	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
)

// Response is the answer to a Request. The codec fills in the uid and the
// review version; a handler only says what the decision is.
type Response struct {
	Allowed  bool
	Code     int32
	Reason   string
	Message  string
	Patch    jsonpatch.Patch
	Warnings []string
	// AuditAnnotations are recorded by the apiserver in the audit event.
	AuditAnnotations map[string]string
	// Policies names the policies that acted on the request (denied it, or
	// changed it), for the review log.
	Policies []string
	// Warned names the policies whose verdict was Warn or Audit, for metrics.
	Warned []string
	// Exempted are the policies PolicyExceptions lifted, for metrics and logs.
	Exempted []Exemption
}

// Exemption is one policy lifted for a request by one PolicyException.
type Exemption struct {
	Policy, Exception string
}

// Allowed answers yes with no change.
func Allowed() Response { return Response{Allowed: true} }

// Patched answers yes with the given changes; an empty patch is a plain allow.
func Patched(p jsonpatch.Patch) Response { return Response{Allowed: true, Patch: p} }

// Denied refuses the request with 403 Forbidden and a message for the user.
func Denied(message string) Response {
	return Response{Code: http.StatusForbidden, Reason: "Forbidden", Message: message}
}

// BadRequest refuses an object whose shape the policies cannot read.
func BadRequest(err error) Response {
	return Response{Code: http.StatusBadRequest, Reason: "BadRequest", Message: err.Error()}
}

// Errored refuses the request because tollgate itself failed to decide.
func Errored(err error) Response {
	return Response{Code: http.StatusInternalServerError, Reason: "InternalError", Message: err.Error()}
}

// Decision is the one-word summary used in logs: allowed, patched or denied.
func (r Response) Decision() string {
	switch {
	case !r.Allowed:
		return "denied"
	case len(r.Patch) > 0:
		return "patched"
	default:
		return "allowed"
	}
}

// String is a short human form for test failures.
func (r Response) String() string {
	return fmt.Sprintf("%s code=%d msg=%q patch=%d warnings=%v", r.Decision(), r.Code, r.Message, len(r.Patch), r.Warnings)
}
