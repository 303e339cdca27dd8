// Package kyverno holds what tollgate takes from Kyverno to decide its
// ValidatingPolicies as Kyverno does: Kyverno's CEL environment, its
// resource library (resource.Get, resource.List) on tollgate's store of
// referenced objects, a policy compiled in them, and Kyverno's words for
// messages and errors.
//
// Comments here and in the other Kyverno files (the policies' decoding
// and autogen in internal/policy, their PolicyExceptions in
// internal/exception, their evaluation in internal/vap) cite Kyverno's
// source by path: github.com/kyverno/kyverno at 111e07bb, and
// github.com/kyverno/api at b27c1100 for the types. The differential
// (test/e2e/kyvernodiff) checks tollgate against Kyverno v1.19.0, pinned
// in hack/kyverno/go.mod.
package kyverno
