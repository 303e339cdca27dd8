package benchpolicies

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// GatekeeperPodSecurity is gatekeeper-library's pod-security-policy
// templates (stored gzipped under test/corpus/gatekeeper-library), each
// with the Constraint of its first sample, as tollgate serve --config
// would load them: one webhook for all, as Gatekeeper has.
func GatekeeperPodSecurity(root string) (*policy.Set, error) {
	dir := filepath.Join(root, "test", "corpus", "gatekeeper-library", "library", "pod-security-policy")
	tmpls, err := filepath.Glob(filepath.Join(dir, "*", "template.yaml.gz"))
	if err != nil {
		return nil, err
	}
	sort.Strings(tmpls)
	var all []*policy.Policy
	for _, t := range tmpls {
		samples, err := filepath.Glob(filepath.Join(filepath.Dir(t), "samples", "*", "constraint.yaml.gz"))
		if err != nil || len(samples) == 0 {
			return nil, fmt.Errorf("%s: no sample Constraint (%v)", filepath.Dir(t), err)
		}
		sort.Strings(samples)
		for _, f := range []string{t, samples[0]} {
			ps, err := parseGzipped(f)
			if err != nil {
				return nil, err
			}
			all = append(all, ps...)
		}
	}
	if len(tmpls) == 0 {
		return nil, fmt.Errorf("no templates under %s", dir)
	}
	set, err := policy.NewSet(all)
	if err != nil {
		return nil, err
	}
	if len(set.Groups) != 1 || len(set.Policies) != len(tmpls) {
		return nil, fmt.Errorf("%d Constraints in %d groups, want %d in one", len(set.Policies), len(set.Groups), len(tmpls))
	}
	return set, nil
}
