package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/tollgate-dev/tollgate/internal/manifest"
)

// loadKinds is the kinds a run knows: the built-in kinds and those of the
// CustomResourceDefinitions in paths (--crd), which hold nothing else.
func loadKinds(paths []string, strict bool) (*manifest.Kinds, error) {
	kinds := manifest.NewKinds()
	kinds.Strict = strict
	if len(paths) == 0 {
		return kinds, nil
	}
	objs, err := manifest.Read(paths, nil)
	if err != nil {
		return nil, fmt.Errorf("--crd: %w", err)
	}
	var errs []error
	for _, o := range objs {
		if o.GVK != manifest.CRDKind {
			errs = append(errs, fmt.Errorf("--crd: %s: %s %s is not an apiextensions.k8s.io/v1 CustomResourceDefinition", o.Where(), o.GVK.GroupVersion(), o))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := kinds.AddCRDs(objs); err != nil {
		return nil, fmt.Errorf("--crd: %w", err)
	}
	return kinds, nil
}

// warnInput tells on stderr which kinds were guessed and which objects
// were given more than once: neither stops the run.
func warnInput(w io.Writer, kinds *manifest.Kinds, duplicates []string) {
	for _, n := range kinds.Notes() {
		fmt.Fprintf(w, "warning: %s\n", n)
	}
	for _, d := range duplicates {
		fmt.Fprintf(w, "warning: %s\n", d)
	}
}
