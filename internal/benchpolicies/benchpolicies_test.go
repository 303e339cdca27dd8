package benchpolicies

import (
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

func TestGroups(t *testing.T) {
	twenty, err := Twenty("../..")
	if err != nil {
		t.Fatal(err)
	}
	library, err := LibraryPods("../..")
	if err != nil {
		t.Fatal(err)
	}
	checks, err := FieldChecks(50)
	if err != nil {
		t.Fatal(err)
	}
	kyverno, err := KyvernoPodSecurity("../..")
	if err != nil {
		t.Fatal(err)
	}
	gk, err := GatekeeperPodSecurity("../..")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		set      *policy.Set
		want     int
		cel      int
		contains []string
	}{
		{"twenty", twenty, 20, len(TwentyLibrary), TwentyLibrary},
		{"library", library, 23, 23, []string{"require-run-as-non-root", "restrict-volume-types", "allowed-registries"}},
		{"field checks", checks, 50, 50, []string{"field-check-0", "field-check-49"}},
		{"gatekeeper", gk, 19, 0, []string{"k8spspprivilegedcontainer/psp-privileged-container", "k8spspseccomp/psp-seccomp"}},
	}
	var kyvernoNames []string
	for _, g := range kyverno.Groups {
		if len(g.Policies) != 1 {
			t.Errorf("Kyverno group %s: %d policies", g.Path(), len(g.Policies))
		}
		kyvernoNames = append(kyvernoNames, g.Policies[0].Name())
	}
	if len(kyvernoNames) != 16 || !strings.Contains(strings.Join(kyvernoNames, " "), "restrict-volume-types") {
		t.Errorf("Kyverno's Pod Security set: %v", kyvernoNames)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := tt.set.Groups[0].Policies
			var cel int
			names := map[string]bool{}
			for _, p := range ps {
				names[p.Name()] = true
				if p.Program() != nil {
					cel++
				}
			}
			if len(ps) != tt.want || cel != tt.cel {
				t.Errorf("%d policies, %d CEL; want %d, %d", len(ps), cel, tt.want, tt.cel)
			}
			for _, n := range tt.contains {
				if !names[n] {
					t.Errorf("no %s among %s", n, strings.Join(keys(names), ", "))
				}
			}
		})
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestKubescapePods: Kubescape's library loads whole, each Pod policy
// bound, those with params given the library's ControlConfiguration, and
// all of them on one webhook entry (they share their webhook settings).
func TestKubescapePods(t *testing.T) {
	set, err := KubescapePods("../..", true)
	if err != nil {
		t.Fatal(err)
	}
	var policies, withParams, entries, served int
	for _, g := range set.Groups {
		p := g.Policies[0]
		if p.VAP == nil {
			continue
		}
		policies++
		if p.VAP.Policy.Spec.ParamKind != nil {
			withParams++
		}
		if len(p.VAP.Bindings) != 1 {
			t.Errorf("%s: %d bindings", p.Name(), len(p.VAP.Bindings))
		}
		for _, w := range g.BindingWebhooks {
			entries++
			served += len(w.Group.Policies)
		}
	}
	if policies != 51 || withParams != 14 || entries != 1 || served != policies {
		t.Errorf("%d Pod policies (%d with params) on %d webhook entries serving %d; want 51 (14), 1 serving all", policies, withParams, entries, served)
	}
	if set, err = KubescapePods("../..", false); err != nil || len(set.Groups) != 37 {
		t.Errorf("without params: %v, want 37 policies", err)
	}
}
