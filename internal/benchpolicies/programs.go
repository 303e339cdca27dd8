package benchpolicies

import (
	"github.com/tollgate-dev/tollgate/internal/cel"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Program is a policy's compiled CEL program and where it comes from.
type Program struct {
	Name    string // the path it was loaded from and the policy's name
	Program *cel.Program
}

// Programs are the CEL programs of every policy loaded from paths (files
// or directories, as policy.LoadPath reads them), in order.
func Programs(paths ...string) ([]Program, error) {
	var out []Program
	for _, path := range paths {
		set, err := policy.LoadPath(path)
		if err != nil {
			return nil, err
		}
		for _, g := range set.Groups {
			for _, p := range g.Policies {
				if prog := p.Program(); prog != nil {
					out = append(out, Program{path + ": " + p.Name(), prog})
				}
			}
		}
	}
	return out, nil
}
