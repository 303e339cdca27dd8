package references

import (
	"fmt"
	"slices"
	"strings"
)

// Read is what a policy's CEL reads of the objects of one reference, as
// the CEL package finds it (analysis.ReferenceReads): the store keeps only that
// of each object. Paths are field names from the object's root; through a
// list they apply to each element.
type Read struct {
	// Whole: the policy may read anything of the objects (it uses an
	// object as a whole value, or in a way the analysis does not follow).
	Whole bool
	// Values are paths whose values the policy reads: kept whole.
	Values [][]string
	// Present are paths the policy only tests the presence of, or selects
	// through (has()): kept, without what is under them.
	Present [][]string
	// Iterated are paths the policy iterates (a comprehension's range): a
	// map there is kept whole (its keys are read); a list element by
	// element, as the paths under it say.
	Iterated [][]string
	// IteratedElements are paths whose list elements the policy iterates:
	// a map that is an element of a list there is kept whole.
	IteratedElements [][]string
}

// fieldNode is what a projection keeps of a value: all of it (whole), of
// a map the named fields (children, each with what to keep of it), of a
// list each element as the node says. A map at a node marked mapWhole is
// kept whole, and so is a map that is a list's element at a node marked
// elemMapWhole.
type fieldNode struct {
	whole        bool
	mapWhole     bool
	elemMapWhole bool
	children     map[string]*fieldNode
}

// always is what every projection keeps: what the store and messages name
// an object by.
var always = [][]string{{"apiVersion"}, {"kind"}, {"metadata", "name"}, {"metadata", "namespace"}}

// treeOf is the projection of a Read: nil (the whole object) when Whole.
func treeOf(r Read) *fieldNode {
	if r.Whole {
		return nil
	}
	t := &fieldNode{}
	for _, p := range append(append([][]string{}, always...), r.Values...) {
		t.at(p).whole = true
	}
	for _, p := range r.Present {
		t.at(p)
	}
	for _, p := range r.Iterated {
		t.at(p).mapWhole = true
	}
	for _, p := range r.IteratedElements {
		t.at(p).elemMapWhole = true
	}
	return t
}

// at is the node of a path, made as needed.
func (t *fieldNode) at(path []string) *fieldNode {
	n := t
	for _, name := range path {
		if n.children == nil {
			n.children = map[string]*fieldNode{}
		}
		c := n.children[name]
		if c == nil {
			c = &fieldNode{}
			n.children[name] = c
		}
		n = c
	}
	return n
}

// union is what either keeps; nil (whole) when either is.
func union(a, b *fieldNode) *fieldNode {
	if a == nil || b == nil {
		return nil
	}
	out := &fieldNode{}
	out.merge(a)
	out.merge(b)
	return out
}

func (t *fieldNode) merge(o *fieldNode) {
	t.whole = t.whole || o.whole
	t.mapWhole = t.mapWhole || o.mapWhole
	t.elemMapWhole = t.elemMapWhole || o.elemMapWhole
	for name, c := range o.children {
		if t.children == nil {
			t.children = map[string]*fieldNode{}
		}
		if t.children[name] == nil {
			t.children[name] = &fieldNode{}
		}
		t.children[name].merge(c)
	}
}

// covers tells whether t keeps everything o keeps (nil keeps all).
func (t *fieldNode) covers(o *fieldNode) bool {
	if t == nil || t.whole {
		return true
	}
	if o == nil || o.whole || (o.mapWhole && !t.mapWhole) || (o.elemMapWhole && !t.elemMapWhole) {
		return false
	}
	for name, oc := range o.children {
		c := t.children[name]
		if c == nil || !c.covers(oc) {
			return false
		}
	}
	return true
}

// String lists what the node keeps, for messages and identities.
func (t *fieldNode) String() string {
	if t == nil {
		return "*"
	}
	var out []string
	t.describe("", &out)
	slices.Sort(out)
	return fmt.Sprint(out)
}

func (t *fieldNode) describe(prefix string, out *[]string) {
	switch {
	case t.whole:
		*out = append(*out, prefix)
		return
	case t.mapWhole || t.elemMapWhole:
		if t.mapWhole {
			*out = append(*out, prefix+"(map whole)")
		}
		if t.elemMapWhole {
			*out = append(*out, prefix+"(element maps whole)")
		}
	case len(t.children) == 0:
		*out = append(*out, prefix+"(present)")
	}
	for name, c := range t.children {
		c.describe(strings.TrimPrefix(prefix+"."+name, "."), out)
	}
}

// keep is what the node keeps of a value; the value is not changed.
func (t *fieldNode) keep(v any) any { return t.keepIn(v, false) }

// keepIn is keep of a value that is a list's element (inList) or not.
func (t *fieldNode) keepIn(v any, inList bool) any {
	if t.whole {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		if (!inList && t.mapWhole) || (inList && t.elemMapWhole) {
			return v
		}
		out := make(map[string]any, len(t.children))
		for name, c := range t.children {
			if fv, ok := x[name]; ok {
				out[name] = c.keepIn(fv, false)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = t.keepIn(e, true)
		}
		return out
	}
	return v
}
