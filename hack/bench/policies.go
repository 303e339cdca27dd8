package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// twentyPolicies is one webhook group of 20 policies about Pods: the
// library's 12 Pod policies (CEL) and 8 label rules, all with the same
// match, so that one review is evaluated against all 20.
func twentyPolicies(root string) (*policy.Set, error) {
	lib, err := policy.LoadPath(filepath.Join(root, "policies"))
	if err != nil {
		return nil, err
	}
	var all []*policy.Policy
	var largest *policy.Group
	for _, g := range lib.Groups {
		if largest == nil || len(g.Policies) > len(largest.Policies) {
			largest = g
		}
	}
	// The first 12 (the library has grown past 20 Pod policies): the row
	// stays the one of earlier runs.
	all = append(all, largest.Policies[:min(12, len(largest.Policies))]...)
	var b strings.Builder
	keys := []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/part-of", "app.kubernetes.io/version", "app.kubernetes.io/component", "team", "environment", "pod-template-hash"}
	for i := 0; len(all)+i < 20; i++ {
		fmt.Fprintf(&b, "apiVersion: tollgate.dev/v1alpha1\nkind: Policy\nmetadata: {name: label-%d}\nspec:\n  match: {resources: [pods], operations: [CREATE, UPDATE], podControllers: true}\n  validate: {labels: [{key: %s}]}\n---\n", i, keys[i%len(keys)])
	}
	extra, err := policy.Parse("bench-labels.yaml", []byte(b.String()))
	if err != nil {
		return nil, err
	}
	set, err := policy.NewSet(append(all, extra...))
	if err != nil {
		return nil, err
	}
	if len(set.Groups) != 1 || len(set.Groups[0].Policies) != 20 {
		return nil, fmt.Errorf("want one group of 20 policies, got %d groups", len(set.Groups))
	}
	return set, nil
}
