package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRDKind is the kind of a CustomResourceDefinition, the only version
// kube-apiserver 1.37 serves.
var CRDKind = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// crd is what a CustomResourceDefinition says of its kind.
type crd struct {
	plural     string
	namespaced bool
	// served are its versions with served: true.
	served []string
	// where is the file:line of (the first) definition.
	where string
}

// crdSpec is the part of a CustomResourceDefinition that names and scopes
// its kind.
type crdSpec struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
		Scope    string `json:"scope"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
		} `json:"versions"`
	} `json:"spec"`
}

// AddCRDs adds the kind of every CustomResourceDefinition among objs;
// other objects are left alone.
func (k *Kinds) AddCRDs(objs []*Object) error {
	var errs []error
	for _, o := range objs {
		if o.GVK != CRDKind {
			continue
		}
		if err := k.AddCRD(o.Where(), o.JSON); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// AddCRD adds the kind of one CustomResourceDefinition (its JSON), found
// at where. The same kind defined again (an install manifest given twice)
// is fine when it has the same plural and scope; its served versions add
// up. A definition that lacks what the apiserver requires, or that
// disagrees with an earlier one, is an error naming both.
func (k *Kinds) AddCRD(where string, data []byte) error {
	var d crdSpec
	if err := json.Unmarshal(data, &d); err != nil {
		return fmt.Errorf("%s: CustomResourceDefinition: %w", where, err)
	}
	s := d.Spec
	missing := ""
	switch {
	case s.Group == "":
		missing = "spec.group"
	case s.Names.Kind == "":
		missing = "spec.names.kind"
	case s.Names.Plural == "":
		missing = "spec.names.plural"
	case len(s.Versions) == 0:
		missing = "spec.versions"
	}
	if missing != "" {
		return fmt.Errorf("%s: CustomResourceDefinition %q: %s is required", where, d.Metadata.Name, missing)
	}
	if s.Scope != "Namespaced" && s.Scope != "Cluster" {
		return fmt.Errorf("%s: CustomResourceDefinition %q: spec.scope %q: want Namespaced or Cluster", where, d.Metadata.Name, s.Scope)
	}
	c := &crd{plural: s.Names.Plural, namespaced: s.Scope == "Namespaced", where: where}
	for _, v := range s.Versions {
		if v.Served {
			c.served = append(c.served, v.Name)
		}
	}
	gk := schema.GroupKind{Group: s.Group, Kind: s.Names.Kind}
	prev, ok := k.crds[gk]
	if !ok {
		k.crds[gk] = c
		return nil
	}
	if prev.plural != c.plural || prev.namespaced != c.namespaced {
		return fmt.Errorf("%s: CustomResourceDefinition %q: %s is defined at %s as %s, here as %s", where, d.Metadata.Name, gk, prev.where, prev.describe(), c.describe())
	}
	for _, v := range c.served {
		if !slices.Contains(prev.served, v) {
			prev.served = append(prev.served, v)
		}
	}
	return nil
}

func (c *crd) describe() string {
	scope := "Cluster"
	if c.namespaced {
		scope = "Namespaced"
	}
	return fmt.Sprintf("%s (%s)", c.plural, scope)
}
