// Package params gives admission policies their parameters as the
// kube-apiserver does. A Store keeps an informer for each param kind the
// loaded policies use, started and stopped as the policies change, and
// resolves a binding's paramRef with the apiserver's own
// generic.CollectParams. Where the informers read from is the Store's
// source: in a cluster, dynamic informers of any resource mapped by
// discovery (NewCluster, cluster.go); offline, the objects of the param
// kinds given in policy files, manifests and --params, held in a read-only
// cache.Indexer per resource and listed by a client-go informer
// (NewOffline, offline.go and listed.go). Nothing here is specific to one
// kind of policy: a ParamKind and ParamRef are all it needs.
package params
