// Package gatekeeper runs OPA Gatekeeper's policies as they are:
// ConstraintTemplates and their Constraints, decided by Gatekeeper's own
// evaluator (the constraint framework's client with its Rego driver, and
// Gatekeeper's Kubernetes validation target, which applies each
// Constraint's spec.match). This package reads the objects, builds that
// client, reviews requests and words the answer as Gatekeeper's webhook
// does. It knows nothing of tollgate's other policies.
//
// Templates whose only code is K8sNativeValidation (CEL) are refused by
// name: Gatekeeper's CEL driver (pkg/drivers/k8scel) does not build with
// the k8s.io libraries tollgate uses. A template with Rego beside CEL runs
// its Rego, as Gatekeeper's webhook does with the CEL engine turned off.
package gatekeeper
