package mutatingpolicy

// errNamespaceLabels is why a binding cannot be evaluated without cluster
// access; the policy's failurePolicy decides, tollgate never guesses.
const errNamespaceLabels = "namespaceSelector needs the labels of the request's namespace, which tollgate reads only with cluster access (--kubeconfig)"
