package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// adder adds a contender serving h on path, and on more paths when an
// object takes several reviews.
type adder func(name string, h http.Handler, path string, more ...string) error

// addMany adds the contenders of many policies: the 20-policy group, the
// library's Pod group (the Pod Security restricted set and the rest of
// the library), and the Pod Security restricted profile twice: tollgate's
// own set (one webhook) and Kyverno's published ValidatingPolicies of it
// (pod-security-vpol); and Kubescape's published ValidatingAdmissionPolicies
// that match Pods. The last two are sent to every webhook entry the
// apiserver would call for an object.
func addMany(root string, src *certs.FileSource, add adder) error {
	twenty, err := benchpolicies.Twenty(root)
	if err != nil {
		return err
	}
	library, err := benchpolicies.LibraryPods(root)
	if err != nil {
		return err
	}
	tg20, err := tollgate(twenty, src)
	if err != nil {
		return err
	}
	if err := add("tollgate validate (20 policies, CEL)", tg20, twenty.Groups[0].Path()); err != nil {
		return err
	}
	tgLib, err := tollgate(library, src)
	if err != nil {
		return err
	}
	if err := add(fmt.Sprintf("tollgate validate (restricted + library, %d policies)", len(library.Groups[0].Policies)), tgLib, library.Groups[0].Path()); err != nil {
		return err
	}
	restricted, err := policy.LoadPath(filepath.Join(root, "policies", "sets", "pod-security-restricted.yaml"))
	if err != nil {
		return err
	}
	if len(restricted.Groups) != 1 {
		return fmt.Errorf("the restricted set is %d groups, want 1", len(restricted.Groups))
	}
	tgRestricted, err := tollgate(restricted, src)
	if err != nil {
		return err
	}
	if err := add(fmt.Sprintf("tollgate validate (Pod Security restricted set, %d policies, 1 webhook)", len(restricted.Groups[0].Policies)), tgRestricted, restricted.Groups[0].Path()); err != nil {
		return err
	}
	kyverno, err := benchpolicies.KyvernoPodSecurity(root)
	if err != nil {
		return err
	}
	tgKyverno, err := tollgate(kyverno, src)
	if err != nil {
		return err
	}
	paths := webhookPaths(kyverno)
	if err := add(fmt.Sprintf("tollgate, Kyverno's pod-security-vpol (%d ValidatingPolicies; webhooks: %d; objects/s)", len(kyverno.Groups), len(paths)), tgKyverno, paths[0], paths[1:]...); err != nil {
		return err
	}
	kubescape, err := benchpolicies.KubescapePods(root, true)
	if err != nil {
		return err
	}
	ext, err := benchpolicies.Params(context.Background(), kubescape)
	if err != nil {
		return err
	}
	tgKubescape, err := tollgateWith(kubescape, engine.Options{External: ext}, src)
	if err != nil {
		return err
	}
	paths = webhookPaths(kubescape)
	return add(fmt.Sprintf("tollgate, Kubescape's VAP library (%d Pod ValidatingAdmissionPolicies; webhooks: %d; objects/s)", len(kubescape.Groups), len(paths)), tgKubescape, paths[0], paths[1:]...)
}

// webhookPaths are the paths the apiserver calls for a set of
// ValidatingAdmissionPolicies: their bindings' webhook entries, which
// policies whose webhook settings agree share.
func webhookPaths(set *policy.Set) []string {
	var paths []string
	for _, g := range set.Groups {
		for _, w := range g.BindingWebhooks {
			paths = append(paths, w.Group.Path())
		}
	}
	return paths
}
