// Package jsonpatch builds RFC 6902 JSON Patch documents with RFC 6901 pointers.
//
// Only what admission needs: operations are values, paths are built from
// segments so that keys holding "/" or "~" are always escaped.
package jsonpatch

import (
	"encoding/json"
	"strings"
)

// Op is one RFC 6902 operation. Value is already-encoded JSON, so a patch
// carries the injected objects exactly as the policy defined them.
type Op struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Patch is an ordered list of operations.
type Patch []Op

// Add returns an "add" of value at path.
func Add(path string, value json.RawMessage) Op { return Op{Op: "add", Path: path, Value: value} }

// Pointer joins segments into a JSON Pointer, escaping each per RFC 6901:
// "~" becomes "~0" and "/" becomes "~1".
func Pointer(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(Escape(s))
	}
	return b.String()
}

var escaper = strings.NewReplacer("~", "~0", "/", "~1")

// Escape escapes one reference token of a JSON Pointer.
func Escape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return escaper.Replace(token)
}
