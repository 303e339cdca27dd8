package validatingpolicy

import "net/http"

// StatusCode is the HTTP status the apiserver answers a denial with the
// given status reason with (reasonToCode in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating): the four reasons
// the API allows, and Invalid's 422 for any other.
func StatusCode(reason string) int32 {
	switch reason {
	case "Unauthorized":
		return http.StatusUnauthorized
	case "Forbidden":
		return http.StatusForbidden
	case "RequestEntityTooLarge":
		return http.StatusRequestEntityTooLarge
	default: // "Invalid", and reasons the API does not allow
		return http.StatusUnprocessableEntity
	}
}
