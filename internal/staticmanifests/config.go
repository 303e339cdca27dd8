package staticmanifests

import (
	"fmt"
	"path"
	"strings"
)

// AdmissionConfiguration is the apiserver's AdmissionConfiguration (given
// to --admission-control-config-file) that points the two webhook plugins
// at apiserverDir's subdirectories; apiserverDir is the manifest directory
// as the apiserver sees it, an absolute path. kubeConfigFile, when set, is
// the plugins' kubeconfig (the credentials the apiserver presents to
// webhooks); it shares the plugin's configuration with staticManifestsDir,
// so an apiserver that has one keeps it here.
func AdmissionConfiguration(apiserverDir, kubeConfigFile string) ([]byte, error) {
	if !path.IsAbs(apiserverDir) {
		return nil, fmt.Errorf("%q: the apiserver needs an absolute path", apiserverDir)
	}
	if kubeConfigFile != "" && !path.IsAbs(kubeConfigFile) {
		return nil, fmt.Errorf("kubeConfigFile %q: the apiserver needs an absolute path", kubeConfigFile)
	}
	var b strings.Builder
	b.WriteString("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n")
	for _, p := range []struct{ plugin, dir string }{{MutatingPlugin, MutatingDir}, {ValidatingPlugin, ValidatingDir}} {
		fmt.Fprintf(&b, "- name: %s\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n", p.plugin)
		if kubeConfigFile != "" {
			fmt.Fprintf(&b, "    kubeConfigFile: %q\n", kubeConfigFile)
		}
		fmt.Fprintf(&b, "    staticManifestsDir: %q\n", path.Join(apiserverDir, p.dir))
	}
	return []byte(b.String()), nil
}
