package benchpolicies

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/params"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// KubescapePods is Kubescape's published library of
// ValidatingAdmissionPolicies (kubescape/cel-admission-library, stored
// gzipped under test/corpus/kubescape-cel-admission-library), as a team
// installs it: every policy whose matchConstraints name Pods, each bound
// in every namespace with validationActions [Deny]. A policy with a
// paramKind gets the library's own ControlConfiguration as its param;
// without params, those are left out (37 of 51). The set is loaded as
// tollgate serve --config would load it.
func KubescapePods(root string, params bool) (*policy.Set, error) {
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
	config, err := manifest.ReadFile(filepath.Join(dir, "configuration", "basic-control-configuration.yaml.gz"))
	if err != nil {
		return nil, err
	}
	_, _, objects, err := policy.ParseAll("basic-control-configuration.yaml", config)
	if err != nil {
		return nil, err
	}
	var all []*policy.Policy
	for _, f := range files {
		ps, err := parseGzipped(f)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if p.VAP == nil || !matchesPods(p) || p.VAP.Policy.Spec.ParamKind != nil && !params {
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
	if len(all) == 0 {
		return nil, fmt.Errorf("no Pod policies under %s", dir)
	}
	set, err := policy.NewSet(all)
	if err != nil {
		return nil, err
	}
	set.Objects = objects
	return set, nil
}

// Params gives a set's policies the params loaded with them (set.Objects),
// as tollgate check and serve find params among the policy files.
func Params(ctx context.Context, set *policy.Set) (external.Sources, error) {
	objs := make([]params.Object, len(set.Objects))
	for i, o := range set.Objects {
		objs[i] = params.Object{Unstructured: o, Where: "the policy files"}
	}
	store, err := params.NewOffline(ctx, params.Offline{ParamKinds: set.ParamKinds(), Objects: objs, Kinds: manifest.NewKinds()})
	if err != nil {
		return external.Sources{}, err
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := store.WaitSynced(wait); err != nil {
		return external.Sources{}, err
	}
	return external.Sources{Params: store}, nil
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
