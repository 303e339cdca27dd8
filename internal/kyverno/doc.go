// Package kyverno reads Kyverno's ValidatingPolicies and
// NamespacedValidatingPolicies as Kyverno does, and compiles them to be
// decided as Kyverno decides them. It owns their types and strict
// decoding, Kyverno's autogen for Pod controllers, the exceptions
// variable, what a policy reads through Kyverno's resource library
// (resource.Get, resource.List) and that library on tollgate's store of
// referenced objects, Kyverno's CEL environment, and Kyverno's words for
// messages and errors.
//
// A policy is compiled as a ValidatingAdmissionPolicy with its binding
// inline, so that the apiserver's code compiles and matches it. Package
// policy holds it among the other policies and joins Kyverno's
// PolicyExceptions (read by package exception) to it; package
// validatingpolicy evaluates it.
//
// Comments cite Kyverno's source by path: github.com/kyverno/kyverno at
// 111e07bb, and github.com/kyverno/api at b27c1100 for the types. The
// differential (test/e2e/kyvernodiff) checks tollgate against Kyverno
// v1.19.0, pinned in hack/kyverno/go.mod.
package kyverno
