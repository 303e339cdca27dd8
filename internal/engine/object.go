package engine

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/tollgate-dev/tollgate/internal/admission"

	sigsjson "sigs.k8s.io/json"
)

// objectMeta is the part of any object label policies read. Decoding only
// this keeps the cost of a review independent of the object's size.
type objectMeta struct {
	Metadata struct {
		Name         string            `json:"name"`
		GenerateName string            `json:"generateName"`
		Namespace    string            `json:"namespace"`
		Labels       map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec rawValue `json:"spec"`
}

// rawValue keeps a field's JSON undecoded.
type rawValue []byte

func (r *rawValue) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

var errNoObject = errors.New("the request has no object")

// decodeMeta reads the metadata of a raw object and checks that its shape is
// one Kubernetes could have sent: an object, whose spec (if any) is an object.
func decodeMeta(raw []byte) (*admission.ObjectMeta, error) {
	if len(raw) == 0 {
		return nil, errNoObject
	}
	var m objectMeta
	if err := unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if spec := bytes.TrimSpace(m.Spec); len(spec) > 0 && spec[0] != '{' && !bytes.Equal(spec, []byte("null")) {
		return nil, fmt.Errorf("cannot read object: spec must be an object, got %s", abbreviate(spec))
	}
	md := m.Metadata
	return &admission.ObjectMeta{Name: md.Name, GenerateName: md.GenerateName, Namespace: md.Namespace, Labels: md.Labels}, nil
}

// metaOf returns the metadata of the request's object (its old object for a
// DELETE) and of its old object: as the review decoder read them, or
// decoded here for requests built otherwise.
func metaOf(req *admission.Request) (obj, old *admission.ObjectMeta, err error) {
	if req.ShapeError != nil {
		return nil, nil, req.ShapeError
	}
	get := func(raw []byte, meta *admission.ObjectMeta) (*admission.ObjectMeta, error) {
		if meta != nil || len(raw) == 0 {
			return meta, nil
		}
		return decodeMeta(raw)
	}
	if obj, err = get(req.Object, req.ObjectMeta); err != nil {
		return nil, nil, err
	}
	if old, err = get(req.OldObject, req.OldObjectMeta); err != nil {
		return nil, nil, err
	}
	if obj == nil {
		obj = old // DELETE: the object is gone, oldObject has it
	}
	if obj == nil {
		return nil, nil, errNoObject
	}
	return obj, old, nil
}

// unmarshal decodes like the apiserver does: field names are case-sensitive.
func unmarshal(raw []byte, v any) error {
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, v); err != nil {
		return fmt.Errorf("cannot read object: %w", err)
	}
	return nil
}

func abbreviate(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
