package corpus

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/suite"
)

// referentialTemplates are gatekeeper-library's referential templates and
// tollgate's own library policy for the same rule.
var referentialTemplates = []struct{ dir, policy string }{
	{"library/general/uniqueingresshost", "unique-ingress-host"},
	{"library/general/uniqueserviceselector", "unique-service-selector"},
}

// knownDifferences are the cases where tollgate's policy decides otherwise
// than the template, by design, with why; none so far.
var knownDifferences = map[string]string{}

// TestGatekeeperLibraryReferential runs every case of the suites of
// gatekeeper-library's referential templates through tollgate's own policy
// for the rule, with the case's inventory as the referenced objects (and
// the object under review, which never counts itself), and wants the
// violation the case asserts: case for case.
func TestGatekeeperLibraryReferential(t *testing.T) {
	dir := filepath.Join(unpack(t), "gatekeeper-library")
	for _, tmpl := range referentialTemplates {
		s, err := suite.Load(filepath.Join(dir, tmpl.dir, suite.GatorFileName))
		if err != nil {
			t.Fatal(err)
		}
		set, err := policy.LoadPath(filepath.Join("..", "..", "policies", "references", tmpl.policy+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		cases := 0
		for _, test := range s.GatorTests() {
			for _, c := range test.Cases {
				cases++
				name := tmpl.dir + "/" + test.Name + "/" + c.Name
				t.Run(name, func(t *testing.T) {
					if len(c.Assertions) != 1 {
						t.Fatalf("want one assertion, have %d", len(c.Assertions))
					}
					// The messages are tollgate's policy's, not the
					// template's: only the count is compared.
					count := suite.GatorAssertion{Violations: c.Assertions[0].Violations}
					var inventory []string
					for _, inv := range c.Inventory {
						inventory = append(inventory, filepath.Join(dir, tmpl.dir, inv))
					}
					var violations []string
					if failed, msg := decide(t, set, tmpl.policy, filepath.Join(dir, tmpl.dir, c.Object), inventory); failed {
						violations = []string{msg}
					}
					if err := count.Check(violations); err != nil {
						if why, ok := knownDifferences[name]; ok {
							t.Logf("differs by design (%s): %v", why, err)
							return
						}
						t.Errorf("tollgate's %s against gatekeeper's template: %v", tmpl.policy, err)
					}
				})
			}
		}
		if cases == 0 {
			t.Errorf("%s/suite.yaml: no cases", tmpl.dir)
		}
	}
}

// decide checks object with the policy, the inventory files as
// --references, as tollgate check would, and says whether it failed.
func decide(t *testing.T, set *policy.Set, name, object string, inventory []string) (bool, string) {
	t.Helper()
	ctx := context.Background()
	objs, err := manifest.Read([]string{object}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := manifest.NewKinds()
	ext, err := offline.ExternalFor(ctx, set, offline.Input{Manifests: objs, Kinds: kinds, ReferencePaths: inventory})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(set, engine.Options{External: ext})
	findings := offline.Run(ctx, eng, objs, offline.Options{Kinds: kinds})
	if len(findings) != 1 {
		t.Fatalf("%d findings for one object", len(findings))
	}
	f := findings[0]
	if f.Err != nil {
		t.Fatal(f.Err)
	}
	for _, r := range f.Results {
		if r.Policy != name {
			continue
		}
		switch r.Outcome {
		case engine.Fail:
			return true, r.Message
		case engine.Pass:
			return false, r.Message
		default:
			t.Fatalf("%s: %s (%s), want pass or fail", name, r.Outcome, r.Message)
		}
	}
	t.Fatalf("no result of %s", name)
	return false, ""
}
