package backgroundaudit

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/references"
)

// readChanged records a kind of params or referenced objects whose
// objects changed (or that became readable), for the loop (Run) to
// evaluate again what the policies reading it may match: a verdict that
// reads other objects follows them (an Ingress becomes a duplicate when
// another one takes its host).
func (a *auditor) readChanged(gvk schema.GroupVersionKind) {
	a.readMu.Lock()
	a.readKinds[gvk] = true
	a.readMu.Unlock()
	signal(a.readSignal)
}

// enqueueReaders queues every object of the resources that the policies
// reading params or referenced objects of the changed kinds may match.
func (a *auditor) enqueueReaders() {
	a.readMu.Lock()
	kinds := a.readKinds
	a.readKinds = map[schema.GroupVersionKind]bool{}
	a.readMu.Unlock()
	set := a.state.Load().set
	var readers []*policy.Policy
	for _, p := range set.Policies {
		if readsAny(p, kinds) {
			readers = append(readers, p)
		}
	}
	if len(readers) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for gvr, w := range a.watching {
		if !w.audited.Load() || !slices.ContainsFunc(readers, func(p *policy.Policy) bool { return p.MayMatchResource(gvr.GroupResource()) }) {
			continue
		}
		for _, k := range w.keys() {
			a.objects.Add(k)
		}
	}
}

// readsAny tells whether a policy reads params or referenced objects of
// one of kinds.
func readsAny(p *policy.Policy, kinds map[schema.GroupVersionKind]bool) bool {
	if p.VAP != nil && p.VAP.Policy.Spec.ParamKind != nil {
		if gv, err := schema.ParseGroupVersion(p.VAP.Policy.Spec.ParamKind.APIVersion); err == nil && kinds[gv.WithKind(p.VAP.Policy.Spec.ParamKind.Kind)] {
			return true
		}
	}
	return slices.ContainsFunc(p.References(), func(c *references.Compiled) bool { return kinds[c.GVK] })
}
