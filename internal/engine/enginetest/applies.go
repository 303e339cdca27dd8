// Package enginetest builds the engines that tests of other packages decide
// with, so that they share one fixture with the engine's own tests.
package enginetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Applies returns an engine with the policies of internal/engine's
// testdata/applies.yaml (each applying only to some requests), which knows
// the namespaces team-a and team-b, labelled team=a and team=b.
func Applies(t testing.TB) *engine.Engine {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.LoadPath(filepath.Join(root, "internal", "engine", "testdata", "applies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	namespaces := namespaces.Func(func(name string) (*corev1.Namespace, bool) {
		labels := map[string]map[string]string{"team-a": {"team": "a"}, "team-b": {"team": "b"}}[name]
		return namespaces.Of(name, labels), labels != nil
	})
	return engine.New(set, engine.Options{Namespaces: namespaces})
}

// moduleRoot is the directory of tollgate's go.mod, above the working
// directory (a test runs in its package's). The source file's own path is
// no help: make builds with -trimpath.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "internal", "engine", "testdata", "applies.yaml")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no tollgate module above %s", dir)
		}
	}
}
