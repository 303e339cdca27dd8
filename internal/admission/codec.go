package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/valyala/fastjson"
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

// Reviews are parsed with fastjson, in one pass over the body and with no
// reflection: on the 16 KB Pod review captured from kube-apiserver 1.37 it
// takes about a fifth of what encoding/json needs merely to find the uid
// (BenchmarkDecode in internal/webhook). Parsers are reused.
var parsers fastjson.ParserPool

// Decode reads an AdmissionReview in either supported version, and the
// metadata of its object and old object. Every failure wraps ErrBadReview.
func Decode(body []byte) (*Review, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, fmt.Errorf("%w: empty body", ErrBadReview)
	}
	// Parsing alone lets some invalid JSON through (raw control characters
	// in strings); validating first holds reviews to the JSON the apiserver
	// and every patch library accept.
	if err := ValidJSON(body); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReview, err)
	}
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReview, err)
	}
	return fromValue(v, member(body, "request"))
}

// fromValue reads the parsed review; rawRequest is the request's JSON in
// the body, which the objects are sliced from.
func fromValue(v *fastjson.Value, rawRequest []byte) (*Review, error) {
	if v.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("%w: want a JSON object, got %s", ErrBadReview, v.Type())
	}
	kind, apiVersion := str(v, "kind"), str(v, "apiVersion")
	if kind != "AdmissionReview" {
		return nil, fmt.Errorf("%w: kind is %q, want AdmissionReview", ErrBadReview, kind)
	}
	if apiVersion != VersionV1 && apiVersion != VersionV1beta1 {
		return nil, fmt.Errorf("%w: apiVersion %q is not %s or %s", ErrBadReview, apiVersion, VersionV1, VersionV1beta1)
	}
	r := v.Get("request")
	if r == nil || r.Type() == fastjson.TypeNull {
		return nil, fmt.Errorf("%w: no request", ErrBadReview)
	}
	if r.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("%w: request is not an object", ErrBadReview)
	}
	req := Request{
		UID:         str(r, "uid"),
		Kind:        schema.GroupVersionKind{Group: str(r, "kind", "group"), Version: str(r, "kind", "version"), Kind: str(r, "kind", "kind")},
		Resource:    schema.GroupVersionResource{Group: str(r, "resource", "group"), Version: str(r, "resource", "version"), Resource: str(r, "resource", "resource")},
		SubResource: str(r, "subResource"),
		Name:        str(r, "name"),
		Namespace:   str(r, "namespace"),
		Operation:   Operation(str(r, "operation")),
		UserInfo:    UserInfo{Username: str(r, "userInfo", "username"), UID: str(r, "userInfo", "uid")},
		DryRun:      r.GetBool("dryRun"),
	}
	if req.UID == "" {
		return nil, fmt.Errorf("%w: request has no uid", ErrBadReview)
	}
	for _, g := range r.GetArray("userInfo", "groups") {
		req.UserInfo.Groups = append(req.UserInfo.Groups, string(g.GetStringBytes()))
	}
	// A shape the policies cannot read is not a transport error: the engine
	// answers it with a denial the apiserver can relay, uid and all.
	raw := members(rawRequest, "object", "oldObject")
	req.Object, req.ObjectMeta, req.ShapeError = object(r.Get("object"), raw[0])
	var oldErr error
	req.OldObject, req.OldObjectMeta, oldErr = object(r.Get("oldObject"), raw[1])
	if req.ShapeError == nil && oldErr != nil {
		req.ShapeError = fmt.Errorf("oldObject: %w", oldErr)
	}
	return &Review{APIVersion: apiVersion, Request: req}, nil
}

// str is the string at path, "" when absent or not a string.
func str(v *fastjson.Value, path ...string) string {
	return string(v.GetStringBytes(path...))
}

// object returns an embedded object's JSON (nil when absent or null), which
// is raw, its bytes in the body, and its metadata, read from v, its parsed value.
func object(v *fastjson.Value, raw []byte) ([]byte, *ObjectMeta, error) {
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil, nil, nil
	}
	if v.Type() != fastjson.TypeObject {
		return raw, nil, fmt.Errorf("cannot read object: want a JSON object, got %s", v.Type())
	}
	meta, err := metaOf(v)
	if err != nil {
		return raw, nil, fmt.Errorf("cannot read object: %w", err)
	}
	return raw, meta, nil
}

// metaOf reads what every policy may need of any object, and checks its
// shape is one Kubernetes could have sent.
func metaOf(v *fastjson.Value) (*ObjectMeta, error) {
	m := &ObjectMeta{}
	if md := v.Get("metadata"); md != nil && md.Type() != fastjson.TypeNull {
		if md.Type() != fastjson.TypeObject {
			return nil, fmt.Errorf("metadata must be an object, got %s", md.Type())
		}
		var err error
		if m.Name, err = optString(md, "name"); err != nil {
			return nil, err
		}
		if m.GenerateName, err = optString(md, "generateName"); err != nil {
			return nil, err
		}
		if m.Namespace, err = optString(md, "namespace"); err != nil {
			return nil, err
		}
		if l := md.Get("labels"); l != nil && l.Type() != fastjson.TypeNull {
			o, err := l.Object()
			if err != nil {
				return nil, fmt.Errorf("metadata.labels must be an object of strings")
			}
			m.Labels = make(map[string]string, o.Len())
			o.Visit(func(k []byte, val *fastjson.Value) {
				s, e := val.StringBytes()
				if e != nil && err == nil {
					err = fmt.Errorf("metadata.labels.%s must be a string, got %s", k, val.Type())
				}
				m.Labels[string(k)] = string(s)
			})
			if err != nil {
				return nil, err
			}
		}
	}
	if s := v.Get("spec"); s != nil && s.Type() != fastjson.TypeNull && s.Type() != fastjson.TypeObject {
		out := s.MarshalTo(nil)
		if len(out) > 40 {
			out = append(out[:40], "..."...)
		}
		return nil, fmt.Errorf("spec must be an object, got %s", out)
	}
	return m, nil
}

func optString(v *fastjson.Value, key string) (string, error) {
	f := v.Get(key)
	if f == nil || f.Type() == fastjson.TypeNull {
		return "", nil
	}
	b, err := f.StringBytes()
	if err != nil {
		return "", fmt.Errorf("metadata.%s must be a string, got %s", key, f.Type())
	}
	return string(b), nil
}

// Encode writes the answer to a request of the given uid as an AdmissionReview
// of the given version.
func Encode(apiVersion, uid string, resp Response) ([]byte, error) {
	var warnings []string
	for _, w := range resp.Warnings {
		warnings = append(warnings, Sanitize(w, MaxWarningBytes))
	}
	resp.Message = Sanitize(resp.Message, MaxMessageBytes)
	out := &admissionv1.AdmissionResponse{
		UID:              types.UID(uid),
		Allowed:          resp.Allowed,
		Warnings:         warnings,
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
