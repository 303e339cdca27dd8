package manifest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Source says where a kind's resource and scope come from.
type Source string

const (
	// FromBuiltin: kube-apiserver serves the kind built in.
	FromBuiltin Source = "built-in"
	// FromCRD: a CustomResourceDefinition given serves the kind.
	FromCRD Source = "CustomResourceDefinition"
	// Guessed: neither; resource and scope are taken from the object.
	Guessed Source = "guessed"
)

// Mapping is a kind's resource as the apiserver names it in admission
// requests, and its scope.
type Mapping struct {
	Resource   schema.GroupVersionResource
	Namespaced bool
	Source     Source
}

// Kinds maps kinds to resources as an apiserver serving the given
// CustomResourceDefinitions would: the kinds kube-apiserver serves built in
// (Builtin), then the kinds of the CRDs added. Any other kind is guessed
// from the object, as kubectl would: its resource by
// meta.UnsafeGuessKindToResource, namespaced when the object names a
// namespace; every guess is recorded for Notes. With Strict, a kind that
// would be guessed is an error instead. Safe for concurrent use once the
// CRDs are added.
type Kinds struct {
	// Strict refuses kinds not known from the built-ins or a CRD.
	Strict bool

	crds map[schema.GroupKind]*crd

	mu      sync.Mutex
	guesses map[string]bool
}

// NewKinds returns a Kinds that knows the built-in kinds only.
func NewKinds() *Kinds {
	return &Kinds{crds: map[schema.GroupKind]*crd{}, guesses: map[string]bool{}}
}

// Lookup maps a kind served built in or by a CRD added; ok is false for
// any other.
func (k *Kinds) Lookup(gvk schema.GroupVersionKind) (m Mapping, ok bool) {
	if gvr, namespaced, ok := Builtin(gvk); ok {
		return Mapping{Resource: gvr, Namespaced: namespaced, Source: FromBuiltin}, true
	}
	if c := k.crds[gvk.GroupKind()]; c != nil && slices.Contains(c.served, gvk.Version) {
		return Mapping{Resource: gvk.GroupVersion().WithResource(c.plural), Namespaced: c.namespaced, Source: FromCRD}, true
	}
	return m, false
}

// Resource maps gvk, the kind of an object that names a namespace when
// hasNamespace, to its resource and scope: Lookup's, else a guess, noted
// (or with Strict an error).
func (k *Kinds) Resource(gvk schema.GroupVersionKind, hasNamespace bool) (Mapping, error) {
	if m, ok := k.Lookup(gvk); ok {
		return m, nil
	}
	m, why := k.guess(gvk, k.crds[gvk.GroupKind()], hasNamespace)
	if k.Strict {
		return m, fmt.Errorf("unknown kind %s: %s (--strict-kinds)", kindString(gvk), why)
	}
	scope := "cluster-scoped"
	if m.Namespaced {
		scope = "namespaced"
	}
	k.note(fmt.Sprintf("%s: %s; taken as %s resource %q", kindString(gvk), why, scope, m.Resource.Resource))
	return m, nil
}

// guess maps a kind neither built in nor served by a CRD, saying why it is
// a guess: a group and kind served at other versions keeps the resource
// and scope those name; any other kind is guessed from the object.
func (k *Kinds) guess(gvk schema.GroupVersionKind, c *crd, hasNamespace bool) (Mapping, string) {
	gk := gvk.GroupKind()
	m := Mapping{Source: Guessed}
	if b, _ := builtins(); b != nil {
		if served, ok := b.byGK[gk]; ok {
			m.Resource, m.Namespaced = gvk.GroupVersion().WithResource(served.resource), served.namespaced
			return m, fmt.Sprintf("kube-apiserver %s serves %s at %s only", APIServerVersion, gk, strings.Join(b.versions[gk], ", "))
		}
	}
	if c != nil {
		m.Resource, m.Namespaced = gvk.GroupVersion().WithResource(c.plural), c.namespaced
		return m, fmt.Sprintf("the CustomResourceDefinition at %s serves versions %s only", c.where, strings.Join(c.served, ", "))
	}
	m.Resource, _ = meta.UnsafeGuessKindToResource(gvk)
	m.Namespaced = hasNamespace
	return m, "not a built-in kind, and no CustomResourceDefinition given for it (--crd)"
}

func (k *Kinds) note(n string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.guesses[n] = true
}

// Notes are the guesses Resource made, one line each, sorted.
func (k *Kinds) Notes() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]string, 0, len(k.guesses))
	for n := range k.guesses {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// kindString names a kind as people write it: apiVersion and kind.
func kindString(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + " " + gvk.Kind
}
