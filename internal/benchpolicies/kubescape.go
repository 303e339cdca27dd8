package benchpolicies

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// KubescapePods is Kubescape's published library of
// ValidatingAdmissionPolicies (kubescape/cel-admission-library, stored
// gzipped under test/corpus/kubescape-cel-admission-library), as a team
// installs it: every policy whose matchConstraints name Pods, each bound
// in every namespace with validationActions [Deny]. A policy with a
// paramKind gets the library's own ControlConfiguration as its param.
// The set is loaded as tollgate serve --config would load it.
func KubescapePods(root string) (*policy.Set, error) {
	dir := filepath.Join(root, "test", "corpus", "kubescape-cel-admission-library")
	var files []string
	err := filepath.WalkDir(filepath.Join(dir, "controls"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "policy.yaml.gz") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	config, err := gunzip(filepath.Join(dir, "configuration", "basic-control-configuration.yaml.gz"))
	if err != nil {
		return nil, err
	}
	all, err := policy.Parse("basic-control-configuration.yaml", config)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := gunzip(f)
		if err != nil {
			return nil, err
		}
		ps, err := policy.Parse(strings.TrimSuffix(f, ".gz"), data)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if p.VAP == nil || !matchesPods(p) {
				continue
			}
			binding := fmt.Sprintf("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: %s}\nspec:\n  policyName: %s\n  validationActions: [Deny]\n", p.Name(), p.Name())
			if p.VAP.Policy.Spec.ParamKind != nil {
				binding += "  paramRef: {name: basic-control-configuration, parameterNotFoundAction: Deny}\n"
			}
			bs, err := policy.Parse(p.Name()+"-binding.yaml", []byte(binding))
			if err != nil {
				return nil, err
			}
			all = append(all, p)
			all = append(all, bs...)
		}
	}
	if len(all) < 2 {
		return nil, fmt.Errorf("no Pod policies under %s", dir)
	}
	return policy.NewSet(all)
}

// matchesPods tells whether a ValidatingAdmissionPolicy's resource rules
// name pods of the core group.
func matchesPods(p *policy.Policy) bool {
	mc := p.VAP.Policy.Spec.MatchConstraints
	if mc == nil {
		return false
	}
	for _, r := range mc.ResourceRules {
		core := false
		for _, g := range r.APIGroups {
			core = core || g == "" || g == "*"
		}
		for _, res := range r.Resources {
			if core && (res == "pods" || res == "*") {
				return true
			}
		}
	}
	return false
}
