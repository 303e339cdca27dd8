package admission

import (
	"fmt"

	"github.com/valyala/fastjson"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// The decoder of the previous version, which parsed the whole review with
// fastjson: FuzzDecode requires Decode to read every review as it did.
// fastjson's Get compares keys as written until a lookup misses, then
// unescaped (a repeated name thus depends on earlier lookups); settle puts
// every object in the second mode, Decode's: the first member of the name,
// unescaped.
func referenceDecode(body []byte) (*Review, error) {
	if err := jsonscan.Valid(body); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReview, err)
	}
	var p fastjson.Parser
	v, err := p.ParseBytes(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReview, err)
	}
	settle(v)
	return refFromValue(v)
}

func settle(v *fastjson.Value) {
	switch v.Type() {
	case fastjson.TypeObject:
		v.Get("\\") // a key with a backslash takes fastjson's unescaping path
		o, _ := v.Object()
		o.Visit(func(_ []byte, x *fastjson.Value) { settle(x) })
	case fastjson.TypeArray:
		for _, x := range v.GetArray() {
			settle(x)
		}
	}
}

func refFromValue(v *fastjson.Value) (*Review, error) {
	if v.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("%w: want a JSON object, got %s", ErrBadReview, v.Type())
	}
	kind, apiVersion := refStr(v, "kind"), refStr(v, "apiVersion")
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
		UID:         refStr(r, "uid"),
		Kind:        schema.GroupVersionKind{Group: refStr(r, "kind", "group"), Version: refStr(r, "kind", "version"), Kind: refStr(r, "kind", "kind")},
		Resource:    schema.GroupVersionResource{Group: refStr(r, "resource", "group"), Version: refStr(r, "resource", "version"), Resource: refStr(r, "resource", "resource")},
		SubResource: refStr(r, "subResource"),
		Name:        refStr(r, "name"),
		Namespace:   refStr(r, "namespace"),
		Operation:   Operation(refStr(r, "operation")),
		UserInfo:    UserInfo{Username: refStr(r, "userInfo", "username"), UID: refStr(r, "userInfo", "uid")},
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
	// The reference keeps its own reading of the metadata, to compare
	// Decode's with: it fills the request's cache as Decode does.
	m := &metas{}
	req.object, m.object, m.err = refObject(r.Get("object"))
	var oldErr error
	req.oldObject, m.oldObject, oldErr = refObject(r.Get("oldObject"))
	if m.err == nil && oldErr != nil {
		m.err = fmt.Errorf("oldObject: %w", oldErr)
	}
	req.meta = m
	return &Review{APIVersion: apiVersion, Request: req}, nil
}

// str is the string at path, "" when absent or not a string.
func refStr(v *fastjson.Value, path ...string) string {
	return string(v.GetStringBytes(path...))
}

// object returns an embedded object's JSON (nil when absent or null), which
// is raw, its bytes in the body, and its metadata, read from v, its parsed value.
func refObject(v *fastjson.Value) ([]byte, *ObjectMeta, error) {
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil, nil, nil
	}
	raw := v.MarshalTo(nil)
	if v.Type() != fastjson.TypeObject {
		return raw, nil, fmt.Errorf("cannot read object: want a JSON object, got %s", v.Type())
	}
	meta, err := refMetaOf(v)
	if err != nil {
		return raw, nil, fmt.Errorf("cannot read object: %w", err)
	}
	return raw, meta, nil
}

// metaOf reads what every policy may need of any object, and checks its
// shape is one Kubernetes could have sent.
func refMetaOf(v *fastjson.Value) (*ObjectMeta, error) {
	m := &ObjectMeta{}
	if md := v.Get("metadata"); md != nil && md.Type() != fastjson.TypeNull {
		if md.Type() != fastjson.TypeObject {
			return nil, fmt.Errorf("metadata must be an object, got %s", md.Type())
		}
		var err error
		if m.Name, err = refOptString(md, "name"); err != nil {
			return nil, err
		}
		if m.GenerateName, err = refOptString(md, "generateName"); err != nil {
			return nil, err
		}
		if m.Namespace, err = refOptString(md, "namespace"); err != nil {
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
		return nil, fmt.Errorf("spec must be an object, got %s", Sanitize(string(s.MarshalTo(nil)), maxQuoteBytes))
	}
	return m, nil
}

func refOptString(v *fastjson.Value, key string) (string, error) {
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
