package references

// NewClusterFrom is newCluster for the external tests: a Cluster of given
// clients and mapper (test doubles in benchmarks).
var NewClusterFrom = newCluster

// TestMapper is the mapper of the tests: Ingresses and Secrets.
var TestMapper = newTestMapper
