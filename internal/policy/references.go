package policy

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/references"
)

// compileReferences compiles spec.references. Only a validation's
// variables and expressions read them: a declaration elsewhere would be
// read by nothing, and is refused.
func (p *Policy) compileReferences() ([]*references.Compiled, field.ErrorList) {
	if len(p.Spec.References) == 0 {
		return nil, nil
	}
	path := field.NewPath("spec", "references")
	if v := p.Spec.Validate; v == nil || len(v.Expressions) == 0 {
		return nil, field.ErrorList{field.Invalid(path, len(p.Spec.References), "only a validate policy's variables and expressions read references: this policy has none")}
	}
	var errs field.ErrorList
	var out []*references.Compiled
	seen := sets.New[string]()
	for i, d := range p.Spec.References {
		if seen.Has(d.Name) {
			errs = append(errs, field.Duplicate(path.Index(i).Child("name"), d.Name))
			continue
		}
		seen.Insert(d.Name)
		c, cerrs := references.Compile(d, path.Index(i))
		errs = append(errs, cerrs...)
		if c != nil {
			out = append(out, c)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// References are the declared references of every policy of the set, in
// order: what a store registers (references.Store.Register).
func (s *Set) References() []*references.Compiled {
	var out []*references.Compiled
	for _, p := range s.Policies {
		out = append(out, p.References()...)
	}
	return out
}

// NewReferenceStore is a store registering every reference the set's
// policies declare, empty: its sources fill it.
func (s *Set) NewReferenceStore() *references.Store {
	st := references.New()
	for _, c := range s.References() {
		st.Register(c)
	}
	return st
}
