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
		rules := FieldCheckRules(i)
		fmt.Fprintf(&b, `apiVersion: tollgate.dev/v1alpha1
kind: Policy
metadata: {name: field-check-%d}
spec:
  match: {resources: [pods], operations: [CREATE, UPDATE]}
  validate:
    expressions:
    - expression: %q
      message: "label forbidden-%d is not allowed"
    - expression: %q
      message: "container forbidden-%d is not allowed"
---
`, i, rules[0], i, rules[1], i)
	}
	ps, err := policy.Parse("field-checks.yaml", []byte(b.String()))
	if err != nil {
		return nil, err
	}
	return oneGroup(ps, n)
}

// FieldCheckRules are the two rules of field check i: a has() on the Pod
// and an all() over its containers.
func FieldCheckRules(i int) [2]string {
	return [2]string{
		fmt.Sprintf("!has(object.metadata.labels) || !('forbidden-%d' in object.metadata.labels)", i),
		fmt.Sprintf("object.spec.containers.all(c, has(c.image) && c.name != 'forbidden-%d')", i),
	}
}
