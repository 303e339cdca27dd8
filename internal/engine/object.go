package engine

import (
	"bytes"
	"errors"
	"fmt"

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
func decodeMeta(raw []byte) (*objectMeta, error) {
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
	return &m, nil
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
