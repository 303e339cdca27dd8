package mutatingpolicy

// ErrNamespaceLabels is errNamespaceLabels for package mutatingpolicy_test,
// whose tests load policies through internal/policy (which imports this
// package).
const ErrNamespaceLabels = errNamespaceLabels
