package mutatingpolicy

// For the tests of package mutatingpolicy_test, which read params offline
// through internal/offline (it imports this package through the engine).
var (
	PodRequest = podRequest
	Pod        = pod
)
