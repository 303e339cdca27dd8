// Package params gives admission policies their parameters as the
// kube-apiserver does. A Store keeps an informer for each param kind the
// loaded policies use (any resource, through the dynamic client and a
// RESTMapper), started and stopped as the policies change, and resolves a
// binding's paramRef with the apiserver's own generic.CollectParams. In a
// cluster the store reads the cluster (NewCluster); offline it reads the
// objects given in manifests through an in-memory tracker (NewOffline), by
// the same code path. Nothing here is specific to one kind of policy: a
// ParamKind and ParamRef are all it needs.
package params
