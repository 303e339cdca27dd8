package audit

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Resource is a kind of object the cluster serves that a policy may match.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// Resources asks the cluster which resources it serves (preferred
// versions, listable, no subresources) and keeps those a validating policy
// of the set may match on CREATE. It may keep more than the policies
// match: the engine decides each object; it must never keep fewer.
func Resources(d discovery.DiscoveryInterface, set *policy.Set) ([]Resource, error) {
	lists, err := discovery.ServerPreferredResources(d)
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discover the cluster's resources: %w", err)
	}
	var out []Resource
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
			if !matchedBySet(set, gr) {
				continue
			}
			out = append(out, Resource{GVR: gv.WithResource(r.Name), Kind: r.Kind, Namespaced: r.Namespaced})
		}
	}
	slices.SortFunc(out, func(a, b Resource) int { return strings.Compare(a.GVR.String(), b.GVR.String()) })
	if err != nil {
		// Some API groups did not answer: say so rather than audit less in silence.
		return out, fmt.Errorf("discover the cluster's resources: %w", err)
	}
	return out, nil
}

func matchedBySet(set *policy.Set, gr schema.GroupResource) bool {
	for _, g := range set.Groups {
		if g.Action != policy.ActionValidate {
			continue
		}
		for _, p := range g.Policies {
			if p.MayMatchResource(gr) {
				return true
			}
		}
	}
	return false
}
