package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The review versions tollgate speaks. v1beta1 has the same JSON shape as v1,
// so one set of Go types reads and writes both.
const (
	VersionV1      = "admission.k8s.io/v1"
	VersionV1beta1 = "admission.k8s.io/v1beta1"
)

// ErrBadReview marks a body that is not an AdmissionReview tollgate can answer.
var ErrBadReview = errors.New("bad admission review")

// Review is a decoded AdmissionReview: the request, and the version to answer in.
type Review struct {
	APIVersion string
	Request    Request
}

// Decode reads an AdmissionReview in either supported version.
// Every failure wraps ErrBadReview.
func Decode(body []byte) (*Review, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, fmt.Errorf("%w: empty body", ErrBadReview)
	}
	var wire admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &wire); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReview, err)
	}
	if wire.Kind != "AdmissionReview" {
		return nil, fmt.Errorf("%w: kind is %q, want AdmissionReview", ErrBadReview, wire.Kind)
	}
	if wire.APIVersion != VersionV1 && wire.APIVersion != VersionV1beta1 {
		return nil, fmt.Errorf("%w: apiVersion %q is not %s or %s", ErrBadReview, wire.APIVersion, VersionV1, VersionV1beta1)
	}
	r := wire.Request
	if r == nil {
		return nil, fmt.Errorf("%w: no request", ErrBadReview)
	}
	if r.UID == "" {
		return nil, fmt.Errorf("%w: request has no uid", ErrBadReview)
	}
	return &Review{
		APIVersion: wire.APIVersion,
		Request: Request{
			UID:         string(r.UID),
			Kind:        schema.GroupVersionKind(r.Kind),
			Resource:    schema.GroupVersionResource(r.Resource),
			SubResource: r.SubResource,
			Name:        r.Name,
			Namespace:   r.Namespace,
			Operation:   Operation(r.Operation),
			UserInfo:    UserInfo{Username: r.UserInfo.Username, UID: r.UserInfo.UID, Groups: r.UserInfo.Groups},
			Object:      r.Object.Raw,
			OldObject:   r.OldObject.Raw,
			DryRun:      r.DryRun != nil && *r.DryRun,
		},
	}, nil
}

// Encode writes the answer to a request of the given uid as an AdmissionReview
// of the given version.
func Encode(apiVersion, uid string, resp Response) ([]byte, error) {
	out := &admissionv1.AdmissionResponse{
		UID:              types.UID(uid),
		Allowed:          resp.Allowed,
		Warnings:         resp.Warnings,
		AuditAnnotations: resp.AuditAnnotations,
	}
	if !resp.Allowed || resp.Code != 0 || resp.Message != "" {
		out.Result = &metav1.Status{
			Code:    resp.Code,
			Reason:  metav1.StatusReason(resp.Reason),
			Message: resp.Message,
		}
		if resp.Allowed {
			out.Result.Status = metav1.StatusSuccess
		} else {
			out.Result.Status = metav1.StatusFailure
		}
	}
	if len(resp.Patch) > 0 {
		patch, err := json.Marshal(resp.Patch)
		if err != nil {
			return nil, fmt.Errorf("encode patch: %w", err)
		}
		pt := admissionv1.PatchTypeJSONPatch
		out.Patch, out.PatchType = patch, &pt
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: "AdmissionReview"},
		Response: out,
	}
	return json.Marshal(&review)
}
