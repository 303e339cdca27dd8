//go:build e2e

package framework

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// InstallReportCRDs installs deploy/crds/<api>/ for each report API named
// (openreports, wgpolicyk8s) as deploy/ ships them, and waits until they
// serve. Installing them again is harmless.
func InstallReportCRDs(cfg *rest.Config, apis ...string) error {
	var paths []string
	for _, a := range apis {
		paths = append(paths, filepath.Join(RepoRoot(), "deploy", "crds", a))
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("report CRDs %v: %w", apis, err)
	}
	return nil
}
