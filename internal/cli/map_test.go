package cli

import (
	"strings"
	"testing"
)

// TestCheckMAP: `tollgate check` runs MutatingAdmissionPolicies through the
// shared engine: the patch shows the policy's mutations, and an error under
// failurePolicy Fail denies with the apiserver's words.
func TestCheckMAP(t *testing.T) {
	dir := t.TempDir()
	policies := write(t, dir, "maps.yaml", `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: proxy}
spec:
  reinvocationPolicy: IfNeeded
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{spec: Object.spec{containers: [Object.spec.containers{name: "proxy", image: "proxy:2"}]}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: proxy}
spec: {policyName: proxy}
`)
	broken := write(t, dir, "broken.yaml", `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: {name: broken}
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: '[JSONPatch{op: "remove", path: "/spec/nothing"}]'}
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: {name: broken}
spec: {policyName: broken}
`)
	manifest := write(t, dir, "pod.yaml", strings.SplitN(pods, "---\n", 2)[0])
	code, out, errs := run("check", "-f", manifest, "-c", policies, "--show-patches")
	if code != 0 || !strings.Contains(out, "+  - image: proxy:2") || !strings.Contains(out, "proxy  ") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run("check", "-f", manifest, "-c", broken)
	if code != 1 || !strings.Contains(out, "policy 'broken' with binding 'broken' denied request: JSON Patch: error in remove for path: '/spec/nothing'") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}
