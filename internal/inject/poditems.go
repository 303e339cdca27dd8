package inject

import (
	"encoding/json"
	"fmt"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// podItems indexes by name what a Pod already has, and what this request
// plans to add, so that no name is ever added twice.
type podItems struct {
	lengths [4]int
	// owner maps a name to the list holding it; containers and init
	// containers share one namespace of names, as in the Pod API.
	containerOwner map[string]list
	byName         [4]map[string]any // decoded lazily: only a name clash needs it
	raw            [4]map[string]any // the item's JSON, nil for items this request adds
}

func newPodItems(pod *Pod) *podItems {
	pt := &podItems{containerOwner: map[string]list{}}
	for l := range pt.raw {
		pt.raw[l] = map[string]any{}
		pt.byName[l] = map[string]any{}
	}
	for l, items := range [4][]Named{pod.InitContainers, pod.Containers, pod.Volumes, pod.ImagePullSecrets} {
		for _, it := range items {
			pt.have(list(l), it.Name, it.JSON)
		}
	}
	for _, it := range pod.EphemeralContainers {
		// Ephemeral containers only reserve their names.
		pt.containerOwner[it.Name] = -1
	}
	return pt
}

func (pt *podItems) have(l list, name string, v any) {
	pt.lengths[l]++
	pt.raw[l][name] = v
	if l == initContainers || l == containers {
		pt.containerOwner[name] = l
	}
}

// plan records an item this request adds.
func (pt *podItems) plan(l list, it policy.Item) {
	pt.raw[l][it.Name] = nil
	pt.byName[l][it.Name] = it.Generic
	if l == initContainers || l == containers {
		pt.containerOwner[it.Name] = l
	}
}

func (pt *podItems) length(l list) int { return pt.lengths[l] }

// missing returns, per list, the policy's items the Pod lacks. An item whose
// name the Pod already uses counts as present when the Pod's item contains
// it; otherwise the policy clashes with the Pod and the reason is returned.
func (pt *podItems) missing(in *policy.Injection) ([4][]policy.Item, string) {
	var out [4][]policy.Item
	for l, items := range [4][]policy.Item{in.InitContainers, in.Containers, in.Volumes, in.ImagePullSecrets} {
		for _, it := range items {
			present, clash := pt.lookup(list(l), it)
			if clash != "" {
				return out, clash
			}
			if !present {
				out[l] = append(out[l], it)
			}
		}
	}
	return out, ""
}

func (pt *podItems) lookup(l list, it policy.Item) (present bool, clash string) {
	if l == initContainers || l == containers {
		if owner, ok := pt.containerOwner[it.Name]; ok && owner != l {
			return false, fmt.Sprintf("the pod already has a container named %q in another list", it.Name)
		}
	}
	if _, ok := pt.raw[l][it.Name]; !ok {
		return false, ""
	}
	have, err := pt.generic(l, it.Name)
	if err != nil || !covers(have, it.Generic) {
		return false, fmt.Sprintf("the pod already has %s %q with different content", singular[l], it.Name)
	}
	return true, ""
}

var singular = [...]string{"init container", "container", "volume", "image pull secret"}

func (pt *podItems) generic(l list, name string) (any, error) {
	if g, ok := pt.byName[l][name]; ok {
		return g, nil
	}
	js, _ := pt.raw[l][name].([]byte)
	var g any
	if err := json.Unmarshal(js, &g); err != nil {
		return nil, err
	}
	pt.byName[l][name] = g
	return g, nil
}
