package benchpolicies

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// KyvernoPodSecurity is Kyverno's published Pod Security set as
// ValidatingPolicies (kyverno/policies' pod-security-vpol, baseline and
// restricted, stored gzipped under test/corpus/kyverno-policies), as
// tollgate serve --config would load it. Each ValidatingPolicy carries its
// own match, so each is a group of its own, registered as a webhook of
// its own: the apiserver calls all of them on a Pod, and a benchmark of
// the set decides the Pod in every group.
func KyvernoPodSecurity(root string) (*policy.Set, error) {
	dir := filepath.Join(root, "test", "corpus", "kyverno-policies", "pod-security-vpol")
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".kyverno-test" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".yaml.gz") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var all []*policy.Policy
	for _, f := range files {
		ps, err := parseGzipped(f)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no policies under %s", dir)
	}
	set, err := policy.NewSet(all)
	if err != nil {
		return nil, err
	}
	if len(set.Groups) != len(all) {
		return nil, fmt.Errorf("%d policies of %s in %d groups, want one each", len(all), dir, len(set.Groups))
	}
	return set, nil
}

// parseGzipped reads the policies of a gzipped file of the corpus.
func parseGzipped(file string) ([]*policy.Policy, error) {
	data, err := manifest.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return policy.Parse(strings.TrimSuffix(file, ".gz"), data)
}
