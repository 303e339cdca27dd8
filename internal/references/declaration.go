// Package references holds the other objects tollgate policies read: the
// objects of each kind a loaded policy declares under spec.references (or
// a Kyverno policy names in resource.Get and resource.List),
// indexed by the keys the declarations name, maintained incrementally
// (Upsert, Delete), so that a policy's lookup by key is a map read, not a
// scan of every object per review. Whatever fills it (the offline reader
// from files now, informers in a cluster) goes through Sink, and a kind
// no source has listed completely is an error on lookup, never an empty set.
package references

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Variable is the CEL variable a policy reads its declared references by:
// references.<name>.
const Variable = "references"

// ErrNoSource is a lookup's error when tollgate was given nowhere to read
// referenced objects from.
var ErrNoSource = errors.New("tollgate has no source of referenced objects: offline, give them with --references FILE|DIR; the server does not list referenced kinds")

// Declaration is one entry of a policy's spec.references: the objects of
// one kind the policy reads, as references.<Name> in its CEL.
type Declaration struct {
	// Name is how the policy's CEL names it: references.<name>.
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Namespaces, when set, limit it to the objects of those namespaces.
	Namespaces []string `json:"namespaces,omitempty"`
	// Selector, when set, limits it to the objects whose labels match.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Indexes are the keys it is looked up by (byKey).
	Indexes []Index `json:"indexes,omitempty"`
}

// Index is a named key of a reference: a CEL expression over the
// referenced object (object), giving one key, a list of keys, or null for
// none.
type Index struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// Compiled is a declaration ready for the store.
type Compiled struct {
	Declaration
	GVK        schema.GroupVersionKind
	namespaces sets.Set[string]
	selector   labels.Selector
	indexes    map[string]*keyProgram
	// fields is what the store keeps of each object (nil: all of it), as
	// the policy reads it (SetRead).
	fields *fieldNode
	// base is id without fields.
	base string
	// id is the declaration's identity in the store (kind, namespaces,
	// selector, indexes): policies declaring the same share one view.
	id string
}

// HasIndex tells whether the declaration names an index so.
func (c *Compiled) HasIndex(name string) bool { _, ok := c.indexes[name]; return ok }

// IndexNames are the declared indexes' names, sorted.
func (c *Compiled) IndexNames() []string { return sets.List(sets.KeySet(c.indexes)) }

// Compile checks a declaration and compiles its index keys; errors name
// the field under path.
func Compile(d Declaration, path *field.Path) (*Compiled, field.ErrorList) {
	var errs field.ErrorList
	if msgs := validation.IsCIdentifier(d.Name); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path.Child("name"), d.Name, "CEL reads it as references.<name>: "+strings.Join(msgs, "; ")))
	}
	gv, err := schema.ParseGroupVersion(d.APIVersion)
	if err != nil || d.APIVersion == "" {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), d.APIVersion, "want group/version, or v1 for the core group"))
	}
	if d.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), "the kind of the objects referenced"))
	}
	c := &Compiled{Declaration: d, GVK: gv.WithKind(d.Kind), namespaces: sets.New(d.Namespaces...), selector: labels.Everything(), indexes: map[string]*keyProgram{}}
	if d.Selector != nil {
		if c.selector, err = metav1.LabelSelectorAsSelector(d.Selector); err != nil {
			errs = append(errs, field.Invalid(path.Child("selector"), d.Selector, err.Error()))
		}
	}
	var ids []string
	for i, ix := range d.Indexes {
		p := path.Child("indexes").Index(i)
		if msgs := validation.IsCIdentifier(ix.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("name"), ix.Name, strings.Join(msgs, "; ")))
			continue
		}
		if _, dup := c.indexes[ix.Name]; dup {
			errs = append(errs, field.Duplicate(p.Child("name"), ix.Name))
			continue
		}
		kp, err := compileKey(ix.Key)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("key"), ix.Key, err.Error()))
			continue
		}
		c.indexes[ix.Name] = kp
		ids = append(ids, ix.Name+"="+ix.Key)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	slices.Sort(ids)
	ns := sets.List(c.namespaces)
	c.base = fmt.Sprintf("%s|%s|%s|%s", c.GVK, strings.Join(ns, ","), c.selector.String(), strings.Join(ids, "\x00"))
	c.id = c.base + "|" + c.fields.String()
	return c, nil
}

// SetRead tells what the declaring policy reads of the objects (with its
// index keys'): the store keeps only that of each. Until told, it keeps
// them whole.
func (c *Compiled) SetRead(r Read) {
	if c.Selector != nil { // the store matches the selector on what it holds
		r.Values = append(r.Values, []string{"metadata", "labels"})
	}
	c.fields = treeOf(r)
	c.id = c.base + "|" + c.fields.String()
}

// Keeps describes what the store keeps of each object, for messages and tests:
// "*" for whole objects.
func (c *Compiled) Keeps() string { return c.fields.String() }

// IndexKeys are the declared index keys' expressions, for the analysis of
// what a policy reads (the keys read the objects too).
func (c *Compiled) IndexKeys() []string {
	out := make([]string, len(c.Indexes))
	for i, ix := range c.Indexes {
		out[i] = ix.Key
	}
	return out
}

// selects tells whether the declaration covers an object of its kind.
func (c *Compiled) selects(namespace string, lbls map[string]string) bool {
	if c.namespaces.Len() > 0 && !c.namespaces.Has(namespace) {
		return false
	}
	return c.selector.Matches(labels.Set(lbls))
}

// KindName is the kind as messages name it: Kind (group/version).
func KindName(gvk schema.GroupVersionKind) string {
	return fmt.Sprintf("%s (%s)", gvk.Kind, gvk.GroupVersion())
}
