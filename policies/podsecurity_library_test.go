package policies_test

// The library's Pod Security policies as a whole: each control of the
// Standards has its policy, and the two ready-made sets in sets/ are the
// per-control policies they are made of. The differential comparison with
// Kubernetes' own Pod Security admission is in podsecurity_test.go.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/pod-security-admission/api"
	psa "k8s.io/pod-security-admission/policy"

	"github.com/tollgate-dev/tollgate/internal/golden"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// The labels that tie a library policy to Kubernetes' Pod Security Standards.
const (
	levelLabel         = "pod-security.tollgate.dev/level"
	controlLabel       = "pod-security.tollgate.dev/control"
	overridesAnnotated = "pod-security.tollgate.dev/overrides"
)

// library is the policy library as tollgate loads it, and what ties its
// Pod Security policies to Kubernetes' checks.
type library struct {
	set *policy.Set
	// control maps a Pod Security check ID to the policy that implements it.
	control map[psa.CheckID]*policy.Policy
}

func loadLibrary(t testing.TB) *library {
	t.Helper()
	set, err := policy.LoadPath(".")
	if err != nil {
		t.Fatalf("load the library: %v", err)
	}
	lib := &library{set: set, control: map[psa.CheckID]*policy.Policy{}}
	for _, p := range set.Policies {
		id := p.Metadata.Labels[controlLabel]
		if id == "" {
			continue
		}
		if prev, ok := lib.control[psa.CheckID(id)]; ok {
			t.Fatalf("policies %s and %s both claim Pod Security check %s", prev.Name(), p.Name(), id)
		}
		lib.control[psa.CheckID(id)] = p
	}
	return lib
}

// latest is every Pod Security check at the newest policy version.
func latest() map[psa.CheckID]psa.Check {
	out := map[psa.CheckID]psa.Check{}
	for _, c := range psa.DefaultChecks() {
		out[c.ID] = c
	}
	return out
}

// TestPodSecurityControlsCovered: every check Kubernetes has at the newest
// version has exactly one library policy, of the same level, and nothing
// claims a check that does not exist. Bumping k8s.io/pod-security-admission
// to a version with a new check fails here until the library has it.
func TestPodSecurityControlsCovered(t *testing.T) {
	lib := loadLibrary(t)
	checks := latest()
	for id, c := range checks {
		p, ok := lib.control[id]
		if !ok {
			t.Errorf("Pod Security check %s (%s) has no library policy", id, c.Level)
			continue
		}
		if got := p.Metadata.Labels[levelLabel]; got != string(c.Level) {
			t.Errorf("policy %s: level %q, Kubernetes puts check %s in %q", p.Name(), got, id, c.Level)
		}
		want := c.Versions[len(c.Versions)-1].OverrideCheckIDs
		var got []psa.CheckID
		if s := p.Metadata.Annotations[overridesAnnotated]; s != "" {
			for _, o := range strings.Split(s, ",") {
				got = append(got, psa.CheckID(strings.TrimSpace(o)))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("policy %s overrides %v, Kubernetes' check %s overrides %v", p.Name(), got, id, want)
		}
	}
	for id, p := range lib.control {
		if _, ok := checks[id]; !ok {
			t.Errorf("policy %s claims Pod Security check %s, which Kubernetes does not have", p.Name(), id)
		}
	}
}

// setFiles are the two ready-made sets, each the per-control policies of
// its level as Kubernetes evaluates that level: restricted runs the baseline
// checks that no restricted check overrides, and the restricted ones.
func setFiles(t testing.TB, lib *library) map[string][]byte {
	t.Helper()
	overridden := map[string]bool{}
	for _, p := range lib.control {
		if s := p.Metadata.Annotations[overridesAnnotated]; s != "" {
			for _, o := range strings.Split(s, ",") {
				overridden[strings.TrimSpace(o)] = true
			}
		}
	}
	members := map[api.Level][]*policy.Policy{}
	for id, p := range lib.control {
		switch p.Metadata.Labels[levelLabel] {
		case string(api.LevelBaseline):
			members[api.LevelBaseline] = append(members[api.LevelBaseline], p)
			if !overridden[string(id)] {
				members[api.LevelRestricted] = append(members[api.LevelRestricted], p)
			}
		case string(api.LevelRestricted):
			members[api.LevelRestricted] = append(members[api.LevelRestricted], p)
		}
	}
	out := map[string][]byte{}
	for level, ps := range members {
		slices.SortFunc(ps, func(a, b *policy.Policy) int { return strings.Compare(a.Name(), b.Name()) })
		var b bytes.Buffer
		fmt.Fprintf(&b, "# The Pod Security %s set: every %s control of the Pod Security Standards, one\n", level, level)
		fmt.Fprintf(&b, "# policy each, as Kubernetes evaluates the %s level at the newest version.\n", level)
		b.WriteString("# Load it as a whole: tollgate serve --config policies/sets/pod-security-" + string(level) + ".yaml\n")
		b.WriteString("# Generated from policies/*.yaml by `go test ./policies -run TestPodSecuritySets -update`; do not edit.\n")
		for _, p := range ps {
			data, err := os.ReadFile(p.Source.File)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("---\n")
			b.Write(data)
		}
		out[filepath.Join("sets", "pod-security-"+string(level)+".yaml")] = b.Bytes()
	}
	return out
}

// TestPodSecuritySets keeps the two sets in step with the per-control
// policies they are made of.
func TestPodSecuritySets(t *testing.T) {
	lib := loadLibrary(t)
	for path, want := range setFiles(t, lib) {
		// Not the policies it is made of: go test ./policies -run TestPodSecuritySets -update
		golden.Check(t, path, want)
		if _, err := policy.LoadPath(path); err != nil {
			t.Errorf("%s does not load: %v", path, err)
		}
	}
}
