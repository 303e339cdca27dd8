package benchpolicies

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// TwentyLibrary are the library's 12 CEL Pod policies of the 20-policy
// group: the Pod policies the library had when the row was first measured,
// named so that the library's growth does not change the row.
var TwentyLibrary = []string{
	"allowed-registries", "disallow-host-namespaces", "disallow-host-path", "disallow-host-ports",
	"disallow-privilege-escalation", "disallow-privileged", "require-pinned-images", "require-probes",
	"require-requests-limits", "require-run-as-non-root", "require-seccomp", "restrict-capabilities",
}

// labelKeys are the keys of the 20-policy group's 8 label rules.
var labelKeys = []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/part-of",
	"app.kubernetes.io/version", "app.kubernetes.io/component", "team", "environment", "pod-template-hash"}

// Twenty is one webhook group of 20 policies about Pods: the library's
// policies named in TwentyLibrary (CEL) and 8 label rules, all with the
// same match, so that one review is evaluated against all 20. root is the
// repository.
func Twenty(root string) (*policy.Set, error) {
	lib, err := policy.LoadPath(filepath.Join(root, "policies"))
	if err != nil {
		return nil, err
	}
	byName := map[string]*policy.Policy{}
	for _, g := range lib.Groups {
		for _, p := range g.Policies {
			byName[p.Name()] = p
		}
	}
	var all []*policy.Policy
	for _, name := range TwentyLibrary {
		p, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("the library has no policy %s", name)
		}
		all = append(all, p)
	}
	var b strings.Builder
	for i, key := range labelKeys {
		fmt.Fprintf(&b, "apiVersion: tollgate.dev/v1alpha1\nkind: Policy\nmetadata: {name: label-%d}\nspec:\n  match: {resources: [pods], operations: [CREATE, UPDATE], podControllers: true}\n  validate: {labels: [{key: %s}]}\n---\n", i, key)
	}
	labels, err := policy.Parse("bench-labels.yaml", []byte(b.String()))
	if err != nil {
		return nil, err
	}
	return oneGroup(append(all, labels...), len(TwentyLibrary)+len(labelKeys))
}

// oneGroup is the set of policies, which must make one group of want.
func oneGroup(ps []*policy.Policy, want int) (*policy.Set, error) {
	set, err := policy.NewSet(ps)
	if err != nil {
		return nil, err
	}
	if len(set.Groups) != 1 || len(set.Groups[0].Policies) != want {
		return nil, fmt.Errorf("want one group of %d policies, got %d groups", want, len(set.Groups))
	}
	return set, nil
}
