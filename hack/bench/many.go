package main

import (
	"fmt"
	"net/http"

	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
	"github.com/tollgate-dev/tollgate/internal/certs"
)

// addMany adds the contenders of many policies on one path: the 20-policy
// group and the library's Pod group (the Pod Security restricted set and
// the rest of the library).
func addMany(root string, src *certs.FileSource, add func(name string, h http.Handler, path string) error) error {
	twenty, err := benchpolicies.Twenty(root)
	if err != nil {
		return err
	}
	library, err := benchpolicies.LibraryPods(root)
	if err != nil {
		return err
	}
	tg20, err := tollgate(twenty, src)
	if err != nil {
		return err
	}
	if err := add("tollgate validate (20 policies, CEL)", tg20, twenty.Groups[0].Path()); err != nil {
		return err
	}
	tgLib, err := tollgate(library, src)
	if err != nil {
		return err
	}
	return add(fmt.Sprintf("tollgate validate (restricted + library, %d policies)", len(library.Groups[0].Policies)), tgLib, library.Groups[0].Path())
}
