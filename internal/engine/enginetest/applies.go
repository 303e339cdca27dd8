// Package enginetest builds the engines that tests of other packages decide
// with, so that they share one fixture with the engine's own tests.
package enginetest

import (
	"path/filepath"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Applies returns an engine with the policies of internal/engine's
// testdata/applies.yaml (each applying only to some requests), which knows
// the namespaces team-a and team-b, labelled team=a and team=b.
func Applies(t testing.TB) *engine.Engine {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	set, err := policy.LoadPath(filepath.Join(filepath.Dir(here), "..", "testdata", "applies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	namespaces := policy.Namespaces(func(name string) (*corev1.Namespace, bool) {
		labels := map[string]map[string]string{"team-a": {"team": "a"}, "team-b": {"team": "b"}}[name]
		return policy.NamespaceOf(name, labels), labels != nil
	})
	return engine.New(set, engine.Options{Namespaces: namespaces})
}
