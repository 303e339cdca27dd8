package audit

import (
	"testing"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

func TestRequestDependence(t *testing.T) {
	const vap = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: v}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations:
  - expression: `
	const tollgate = `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: p}
spec:
  match: {resources: [pods]}
  validate:
    expressions:
    - expression: `
	for _, tt := range []struct {
		name, doc, want string
	}{
		{"vap on the object", vap + `"object.metadata.name != 'x'"`, ""},
		{"vap on the user", vap + `"request.userInfo.username == 'admin'"`, "request.userInfo"},
		{"vap on the old object", vap + `"oldObject == null || object.spec == oldObject.spec"`, "oldObject"},
		{"vap asking the authorizer", vap + `"authorizer.group('').resource('pods').check('create').allowed()"`, "authorizer"},
		{"tollgate on the object", tollgate + `"has(object.metadata.labels)"`, ""},
		{"tollgate on the user", tollgate + `"request . userInfo.groups.exists(g, g == 'x')"`, "request.userInfo"},
		{"a name that only looks alike", tollgate + `"object.metadata.name != 'myoldObjectName'"`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ps, _, err := policy.ParseFile("p.yaml", []byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := RequestDependence(ps[0]); got != tt.want {
				t.Errorf("RequestDependence = %q, want %q", got, tt.want)
			}
		})
	}
}
