package benchpolicies

import (
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// FieldChecks is one group of n simple CEL policies on Pods, each a field
// check of the kind the per-policy target is about: a has() on the Pod and
// an all() over its containers, each policy reading its own label so that
// no two policies are the same program.
func FieldChecks(n int) (*policy.Set, error) {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: field-check-%d}
spec:
  match: {resources: [pods], operations: [CREATE, UPDATE]}
  validate:
    expressions:
    - expression: "!has(object.metadata.labels) || !('forbidden-%d' in object.metadata.labels)"
      message: "label forbidden-%d is not allowed"
    - expression: "object.spec.containers.all(c, has(c.image) && c.name != 'forbidden-%d')"
      message: "container forbidden-%d is not allowed"
---
`, i, i, i, i, i)
	}
	ps, err := policy.Parse("field-checks.yaml", []byte(b.String()))
	if err != nil {
		return nil, err
	}
	return oneGroup(ps, n)
}
