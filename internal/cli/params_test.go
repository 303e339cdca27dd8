package cli

import (
	"testing"
)

const paramPolicies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  validations:
  - expression: "object.spec.replicas <= int(params.data.max)"
    messageExpression: "'replicas must be at most ' + params.data.max"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec:
  policyName: max-replicas
  validationActions: [Deny]
  paramRef: {name: limits, parameterNotFoundAction: Deny}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: approved}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  validations:
  - expression: "authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('approve').allowed()"
    message: not an approver
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: approved}
spec: {policyName: approved, validationActions: [Warn]}
`

const paramObjects = `apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: shop}
data: {max: "2"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: approvers, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: approver}
subjects: [{kind: User, apiGroup: rbac.authorization.k8s.io, name: alice}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: approver}
rules: [{apiGroups: [apps], resources: [deployments], verbs: [approve]}]
`

func deploymentYAML(name string, replicas string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `, namespace: shop}
spec:
  replicas: ` + replicas + `
  selector: {matchLabels: {app: x}}
  template: {metadata: {labels: {app: x}}, spec: {containers: [{name: a, image: a:1}]}}
`
}

func TestCheckParams(t *testing.T) {
	dir := t.TempDir()
	config := write(t, dir, "policies.yaml", paramPolicies)
	params := write(t, dir, "params.yaml", paramObjects)
	small := write(t, dir, "small.yaml", deploymentYAML("small", "2"))
	big := write(t, dir, "big.yaml", deploymentYAML("big", "3"))
	// the param objects beside the policies, in a config directory
	both := t.TempDir()
	write(t, both, "policies.yaml", paramPolicies)
	write(t, both, "params.yaml", paramObjects)
	for _, tt := range []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"param from --params allows", []string{"check", "-c", config, "--params", params, "-f", small, "--user", "alice"}, 0, []string{"max-replicas", "pass"}},
		{"param from --params denies", []string{"check", "-c", config, "--params", params, "-f", big, "--user", "alice"}, 1, []string{"replicas must be at most 2"}},
		{"params beside the policies", []string{"check", "-c", both, "-f", big, "--user", "alice"}, 1, []string{"replicas must be at most 2"}},
		{"authorizer from RBAC objects", []string{"check", "-c", config, "--params", params, "-f", small, "--user", "bob"}, 0, []string{"not an approver"}},
		{"param not given: not found, as in a cluster without it", []string{"check", "-c", config, "-f", small}, 1,
			[]string{"no params found for policy binding with `Deny` parameterNotFoundAction"}},
	} {
		t.Run(tt.name, func(t *testing.T) { runWant(t, tt.code, tt.contains, tt.args...) })
	}
}
