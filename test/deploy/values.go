package deploy

import "path/filepath"

// NonDefaultValues are helm arguments, by name, that set the chart's values
// to other than their defaults: test/deploy renders each and decodes every
// object strictly (TestChartNonDefaultValuesDecodeStrictly), and
// test/e2e/incluster has a real apiserver accept each in a server-side dry
// run (TestChartNonDefaultValuesDryRun). root is the repository, for the
// files --set-file reads.
func NonDefaultValues(root string) map[string][]string {
	return map[string][]string{
		"cert-manager, existing ConfigMap, 5 replicas": {
			"--set", "certificates.source=cert-manager", "--set", "policies.source=existingConfigMap",
			"--set", "policies.existingConfigMap=my-policies", "--set", "replicas=5"},
		"existing Secret, inline policies, scheduling": {
			"--set", "certificates.source=existingSecret", "--set", "certificates.existingSecret=my-tls",
			"--set", "policies.source=inline", "--set-file", `policies.inline.seed\.yaml=` + filepath.Join(root, "deploy", "base", "policies", "seed-policies.yaml"),
			"--set", "nodeSelector.pool=system", "--set", "tolerations[0].key=dedicated", "--set", "tolerations[0].operator=Exists",
			"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool",
			"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
			"--set", "logLevel=debug", "--set", "metrics.port=9100", "--set", "priorityClassName=", "--set", "namespace.create=true",
			"--set", "podAnnotations.a=b", "--set", "imagePullSecrets[0].name=registry"},
		"embedded policies, no metrics, no PDB": {
			"--set", "policies.source=embedded", "--set", "metrics.enabled=false", "--set", "podDisruptionBudget.enabled=false"},
		"wgpolicyk8s reports":      {"--set", "backgroundAudit.reportsAPI=wgpolicyk8s"},
		"the library's references": {"-f", filepath.Join(root, "deploy", "references", "values.yaml")},
	}
}
