// Package authz answers the CEL authorizer variable of admission policies
// as the kube-apiserver would. In a cluster, SubjectAccessReviews through
// the apiserver's own webhook authorizer, with its bounded decision cache
// (allowed decisions kept 30s, denied 10s). Offline, the RBAC objects of
// the manifests given, by Kubernetes' RBAC rules. Without either, every
// check errors, naming what tollgate needs.
package authz
