package benchpolicies

import (
	"fmt"
	"path/filepath"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// LibraryPods is the library's group of Pod policies as tollgate serve
// --config policies/ registers it: the whole Pod Security restricted set
// (policies/sets/pod-security-restricted.yaml) and the rest of the
// library's policies with the same match, all on one path. It fails if a
// policy of the restricted set is not in the group.
func LibraryPods(root string) (*policy.Set, error) {
	lib, err := policy.LoadPath(filepath.Join(root, "policies"))
	if err != nil {
		return nil, err
	}
	restricted, err := policy.LoadPath(filepath.Join(root, "policies", "sets", "pod-security-restricted.yaml"))
	if err != nil {
		return nil, err
	}
	var largest *policy.Group
	for _, g := range lib.Groups {
		if largest == nil || len(g.Policies) > len(largest.Policies) {
			largest = g
		}
	}
	in := map[string]bool{}
	for _, p := range largest.Policies {
		in[p.Name()] = true
	}
	for _, g := range restricted.Groups {
		for _, p := range g.Policies {
			if !in[p.Name()] {
				return nil, fmt.Errorf("the library's Pod group %s lacks %s of the restricted set", largest.Path(), p.Name())
			}
		}
	}
	return oneGroup(largest.Policies, len(largest.Policies))
}
