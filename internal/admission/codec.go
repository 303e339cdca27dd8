package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
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

// Reviews are read without reflection and without parsing the objects:
// the body is validated once, strictly, in a pass that also notes where
// each object and array ends (jsonscan.ValidIndexed), so that the members
// tollgate reads are found without scanning again what lies between them
// (the objects, most of a review); only the small ones (the request's
// fields, the objects' metadata) are parsed, with fastjson. The objects
// are handed on as slices of the body; policies parse what they read of
// them (BenchmarkDecode in internal/webhook).
var parsers fastjson.ParserPool

// Decode reads an AdmissionReview in either supported version, and the
// metadata of its object and old object. Every failure wraps ErrBadReview.
// The request's objects are slices of body, which must stay unchanged while
// the review is in use. A name repeated in one object is not looked for:
// the apiserver encodes what it decoded and never repeats one, and the
// search would triple the cost of decoding (jsonscan.Indexed.RepeatedKey);
// `tollgate review`, whose input is written by hand, refuses one.
func Decode(body []byte) (*Review, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, fmt.Errorf("%w: empty body", ErrBadReview)
	}
	// The objects nest as deep as the apiserver decodes them (encoding/json's
	// 10,000 levels), two levels down: request.object.
	doc, err := jsonscan.ValidIndexedBelow(body, objectSizing, 2)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReview, err)
	}
	root := doc.Root()
	if t := jsonscan.TypeOf(doc.Bytes(root)); t != fastjson.TypeObject {
		return nil, fmt.Errorf("%w: want a JSON object, got %s", ErrBadReview, t)
	}
	top := doc.Members(root, "kind", "apiVersion", "request")
	kind, apiVersion := jsonscan.String(doc.Bytes(top[0])), jsonscan.String(doc.Bytes(top[1]))
	if kind != "AdmissionReview" {
		return nil, fmt.Errorf("%w: kind is %q, want AdmissionReview", ErrBadReview, kind)
	}
	if apiVersion != VersionV1 && apiVersion != VersionV1beta1 {
		return nil, fmt.Errorf("%w: apiVersion %q is not %s or %s", ErrBadReview, apiVersion, VersionV1, VersionV1beta1)
	}
	switch jsonscan.TypeOf(doc.Bytes(top[2])) {
	case fastjson.TypeNull:
		return nil, fmt.Errorf("%w: no request", ErrBadReview)
	case fastjson.TypeObject:
	default:
		return nil, fmt.Errorf("%w: request is not an object", ErrBadReview)
	}
	req, err := request(doc, top[2])
	if err != nil {
		return nil, err
	}
	return &Review{APIVersion: apiVersion, Request: *req}, nil
}

// request reads a request object: its own fields, and its objects' metadata.
func request(doc jsonscan.Indexed, at jsonscan.Span) (*Request, error) {
	spans := doc.Members(at, "uid", "kind", "resource", "subResource", "name", "namespace", "operation", "userInfo", "dryRun", "object", "oldObject")
	f := doc.BytesOf(spans)
	req := &Request{
		UID:         jsonscan.String(f[0]),
		SubResource: jsonscan.String(f[3]),
		Name:        jsonscan.String(f[4]),
		Namespace:   jsonscan.String(f[5]),
		Operation:   Operation(jsonscan.String(f[6])),
		DryRun:      string(f[8]) == "true",
	}
	if req.UID == "" {
		return nil, fmt.Errorf("%w: request has no uid", ErrBadReview)
	}
	// The answer must carry the uid as sent, and JSON encoders (this one,
	// the apiserver's) write invalid UTF-8 as U+FFFD: such a uid could
	// not come back.
	if !utf8.ValidString(req.UID) {
		return nil, fmt.Errorf("%w: request uid %q is not valid UTF-8, so no answer could carry it", ErrBadReview, req.UID)
	}
	// One parser, each value read before the next parse reuses it.
	p := parsers.Get()
	defer parsers.Put(p)
	kind := parse(p, f[1])
	req.Kind = schema.GroupVersionKind{Group: str(kind, "group"), Version: str(kind, "version"), Kind: str(kind, "kind")}
	resource := parse(p, f[2])
	req.Resource = schema.GroupVersionResource{Group: str(resource, "group"), Version: str(resource, "version"), Resource: str(resource, "resource")}
	user := parse(p, f[7])
	req.UserInfo = UserInfo{Username: str(user, "username"), UID: str(user, "uid")}
	for _, g := range user.GetArray("groups") {
		req.UserInfo.Groups = append(req.UserInfo.Groups, string(g.GetStringBytes()))
	}
	// A shape the policies cannot read is not a transport error: the engine
	// answers it with a denial the apiserver can relay, uid and all.
	req.object, req.oldObject, req.doc = objectJSON(f[9]), objectJSON(f[10]), doc
	req.meta = metasOf(p, doc, spans[9], doc, spans[10])
	return req, nil
}

// parse parses a small member with p, nil when absent or not an object.
// The value is valid until p parses again.
func parse(p *fastjson.Parser, raw []byte) *fastjson.Value {
	if jsonscan.TypeOf(raw) != fastjson.TypeObject {
		return nil
	}
	v, err := p.ParseBytes(raw)
	if err != nil {
		return nil
	}
	return v
}

// str is the string at path, "" when absent or not a string.
func str(v *fastjson.Value, path ...string) string {
	if v == nil {
		return ""
	}
	return string(v.GetStringBytes(path...))
}

// objectJSON is an embedded object's JSON as sent, nil when absent or null.
func objectJSON(raw []byte) []byte {
	if jsonscan.TypeOf(raw) == fastjson.TypeNull {
		return nil
	}
	return raw
}

// Encode writes the answer to a request of the given uid as an AdmissionReview
// of the given version.
func Encode(apiVersion, uid string, resp Response) ([]byte, error) {
	warnings := Warnings(resp.Warnings)
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
