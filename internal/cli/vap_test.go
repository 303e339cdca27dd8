package cli

import (
	"strings"
	"testing"
)

// TestCheckVAPNamespaces: offline, a ValidatingAdmissionPolicy whose binding
// selects namespaces by label is decided from the namespaces given, and
// without them refused by its failurePolicy (Fail) naming what it needs;
// `review` on the binding's path answers as the server does there.
func TestCheckVAPNamespaces(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "vap.yaml", `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-qa}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations: [{expression: "object.metadata.labels.environment != 'qa'", message: "no qa pods"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: team-a}
spec:
  policyName: no-qa
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {team: a}}
`)
	qa := write(t, t.TempDir(), "qa.yaml", strings.SplitN(pods, "---\n", 2)[1])
	unknown := `namespace \"shop\" labels unknown: run with --kubeconfig or give the Namespace object`
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"namespace not given", []string{"check", "-c", dir, "-f", qa, "-o", "json"}, 1, unknown},
		{"namespace selected", []string{"check", "-c", dir, "-f", qa, "--namespace-labels", "shop=team=a"}, 1, "with binding 'team-a' denied request: no qa pods"},
		{"namespace not selected", []string{"check", "-c", dir, "-f", qa, "--namespace-labels", "shop=team=b"}, 0, "0 fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(tc.args...)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d; output lacks %q?\n%s%s", code, tc.code, tc.want, out, errs)
			}
		})
	}
	review := "../admission/testdata/review-pod-create.json" // a Pod in shop, environment prod
	if code, out, errs := run("review", "-c", dir, "-f", review, "--path", "/validate/no-qa"); code != 1 || !strings.Contains(out, "labels unknown") {
		t.Errorf("review on the policy's path: exit %d %s%s", code, out, errs)
	}
	if code, out, errs := run("review", "-c", dir, "-f", review, "--path", "/validate/no-qa/team-a"); code != 0 || !strings.Contains(out, `"allowed":true`) {
		t.Errorf("review on the binding's path: exit %d %s%s", code, out, errs)
	}
}
