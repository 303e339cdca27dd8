// Package lazy owns the review's objects as CEL reads them from their
// JSON: the documents (an object's bytes, their index and sizes, read in
// one pass; Document), the CEL values made of them one level at a time as
// an expression reaches them (lazy maps and lists, through the review's
// adapter, Values), the reading of JSON scalars (ReadScalar) and the
// decoding of a whole object (ObjectFromJSON) they are held equal to; and
// the variables map (MapValue), whose values are evaluated as read.
//
// Both evaluators read these: tollgate's tracked evaluation (package cel)
// as CEL values, the fast path's direct evaluator (package fastpath) as
// spans of the documents (Members, Elements, ReadScalar). Nothing here
// decides anything; it imports cel-go's types, fastjson, jsonscan and the
// apiserver's name unescaping.
//
// The values' Go types are named as those the apiserver makes in their
// place (the lazy map and list, package lazy/types; MapValue), because
// messages print them.
package lazy

import (
	"bytes"
	"errors"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/valyala/fastjson"

	lazytypes "github.com/tollgate-dev/tollgate/internal/cel/lazy/types"
	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// The CEL values of a review's objects are read from the review's JSON as
// an expression reaches them, one object or array at a time, instead of
// converting the whole object into Go maps first (ObjectFromJSON): a
// policy reads a handful of a Pod's 500-odd members.
//
// Why the values are those of ObjectFromJSON and the values adapter, exactly:
//
//   - One level of an object or array is decoded into the same Go values
//     toGo makes (level): strings unescaped by fastjson, numbers as
//     fastjson's Int64 then Float64 read the token, true, false, nil, the
//     members in order so that a repeated name keeps its last value, known
//     keys not allocated; empty objects and arrays as the empty map and
//     slice toGo makes. Only a non-empty nested object or array differs: it
//     is a node, its bytes, which the adapter turns into its own CEL value
//     on first read and keeps.
//   - That level is wrapped in cel-go's own map and list
//     (types.NewStringInterfaceMap, types.NewDynamicList) with the values
//     adapter, as today (package lazy/types, whose Go type names are
//     cel-go's, which messages print): lookups, has(), .?, in, size(), equality either
//     way, iteration, errors ("no such key: x") and formatting are cel-go's
//     code on the same keys and values, the nested ones reached through
//     the adapter as before.
//   - The methods that hand out the underlying Go value, where a node
//     would show, are replaced: Value and ConvertToNative answer from the
//     fully decoded value (toGo of the bytes, made once) wrapped as the
//     default adapter wraps it, so a library converting a map or list to
//     native values gets what it got before, no node; Fold hands out the
//     adapter's CEL values instead of raw ones (the interpreter converts
//     what it is handed with an adapter, and a CEL value is itself);
//     ConvertToType(map or list) returns the wrapper; a list's String
//     prints the decoded elements as cel-go prints raw ones.
//
// TestLazyValues and FuzzLazyValues compare every one of these with
// today's value on edge-case documents; TestEvaluateAsReference and
// FuzzEvaluateAsReference decide with these values what the apiserver's
// validator decides on the decoded objects.
//
// A review is evaluated by one goroutine: nodes cache without locks.

// document is an object of the review as JSON, and where its objects and
// arrays end, so that reading one level skips the levels below it; and its
// sizes, for the fast path, read by the same pass. raw may hold more than
// the object (the whole review, when its index serves): the object is the
// one at raw[start].
type Document struct {
	raw   []byte
	start int
	index *jsonscan.Index
	// Sizes are the object's, read by the same pass as its index.
	Sizes jsonscan.Sizes
	// read is what Members, Elements and End read of it (read.go).
	read read
}

// ErrDeep is NewDocument's answer for an object nested deeper than its
// values are read lazily (Deep): ObjectFromJSON decodes it, as the
// apiserver's decoder does, and the evaluation reads it decoded.
var ErrDeep = errors.New("object nested deeper than fastjson reads")

// NewDocument reads the shape and sizes of obj, validated JSON, once
// (jsonscan.NewIndex; metadata's strings apart, as stats has them), or
// takes them from in, the indexed review obj is a value of, when it has
// its objects' sizes. The error is the one ObjectFromJSON would return
// when obj is no object, or ErrDeep when it nests deeper than fastjson
// reads (Deep, its MaxDepth, the one limit it puts on valid JSON). Nil
// for no bytes, which is no object.
func NewDocument(obj []byte, in jsonscan.Indexed) (*Document, error) {
	if len(obj) == 0 {
		return nil, nil
	}
	if d := fromReview(obj, in); d != nil {
		return d, nil
	}
	x := jsonscan.NewIndex(obj, "metadata")
	sz, _ := x.Sizes() // NewIndex reads them
	d := &Document{raw: obj, index: x, Sizes: sz}
	if jsonscan.TypeOf(obj) != fastjson.TypeObject {
		_, err := RuntimeObject(obj)
		return nil, err
	}
	if Deep(d.index.Depth()) {
		return nil, ErrDeep
	}
	d.start = 0
	for obj[d.start] != '{' { // leading space
		d.start++
	}
	return d, nil
}

// fromReview is the document of obj in the indexed review in, nil when in
// cannot serve: no sizes, obj not one of its values or no object, or the
// review nested deep enough that the object might be too deep (which
// newDocument then says, from obj alone).
func fromReview(obj []byte, in jsonscan.Indexed) *Document {
	sz, ok := in.Sizes()
	if !ok || Deep(in.Index().Depth()) {
		return nil
	}
	at, ok := in.Span(obj)
	if !ok || in.JSON()[at.Start] != '{' {
		return nil
	}
	return &Document{raw: in.JSON(), start: at.Start, index: in.Index(), Sizes: sz}
}

// Indexed is the document as jsonscan reads it: its bytes (which may
// hold more than the object) and their index.
func (d *Document) Indexed() jsonscan.Indexed { return jsonscan.IndexedOf(d.raw, d.index) }

// root is the document's object as a node.
func (d *Document) root() *node {
	return &node{doc: d, start: d.start, end: d.End()}
}

// node is a non-empty JSON object or array of a review not read yet:
// doc.raw[start:end].
type node struct {
	doc        *Document
	start, end int
	val        ref.Val
}

// valueOf is the CEL value of a node: an object's or array's first level,
// wrapped; an empty one as the adapter wraps what toGo makes of it.
func (c *Values) valueOf(n *node) ref.Val {
	if n.val != nil {
		return n.val
	}
	raw := n.doc.raw[n.start:n.end]
	if raw[0] == '{' {
		level := objectLevel(n.doc, n.start)
		if len(level) == 0 {
			n.val = c.NativeToValue(level)
		} else {
			n.val = lazytypes.NewMap(level, c, raw, decoded)
		}
	} else {
		level := arrayLevel(n.doc, n.start)
		if len(level) == 0 {
			n.val = c.NativeToValue(level)
		} else {
			n.val = lazytypes.NewList(level, c, raw, decoded)
		}
	}
	return n.val
}

// objectLevel is the members of the object at d.raw[start], nested objects
// and arrays as nodes.
func objectLevel(d *Document, start int) map[string]any {
	known := knownKeys()
	m := map[string]any{}
	for k, v := range d.index.Members(d.raw, start) {
		m[keyOf(known, k)] = Native(d, v)
	}
	return m
}

// arrayLevel is the elements of the array at d.raw[start], nested objects
// and arrays as nodes.
func arrayLevel(d *Document, start int) []any {
	var out []any
	for v := range d.index.Elements(d.raw, start) {
		out = append(out, Native(d, v))
	}
	if out == nil {
		out = []any{}
	}
	return out
}

// keyOf is a quoted key as toGo has it.
func keyOf(known map[string]string, quoted []byte) string {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return key(known, inner)
	}
	return jsonscan.Unescape(quoted)
}

// Native is what toGo makes of the value at v of d, except a non-empty
// object or array, which is a node the adapter (Values) makes a lazy
// value of.
func Native(d *Document, v jsonscan.Span) any {
	raw := d.raw[v.Start:v.End]
	switch raw[0] {
	case '{', '[':
		if emptyContainer(raw) {
			if raw[0] == '{' {
				return map[string]any{}
			}
			return []any{}
		}
		return &node{doc: d, start: v.Start, end: v.End}
	}
	switch s := ReadScalar(raw, false); s.Kind {
	case String:
		return s.S
	case Bool:
		return s.B
	case Int:
		return s.I
	case Double:
		return s.F
	}
	return nil
}

// emptyContainer tells whether an object or array has nothing but space
// between its brackets.
func emptyContainer(raw []byte) bool {
	for _, c := range raw[1 : len(raw)-1] {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return false
		}
	}
	return true
}

// decoded is raw as toGo decodes it, wrapped by the default adapter.
func decoded(raw []byte) ref.Val {
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(raw)
	if err != nil {
		// Not reached: the objects are valid JSON that ObjectFromJSON reads
		// (newDocument), and nodes are parts of them.
		return types.NewErr("cannot read object: %v", err)
	}
	if v.Type() != fastjson.TypeObject && v.Type() != fastjson.TypeArray {
		return types.NewErr("cannot read object: want an object or array, got %s", v.Type())
	}
	return types.DefaultTypeAdapter.NativeToValue(toGo(v, knownKeys()))
}
