package policy

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespaces returns a namespace by name, and whether it is known. Policies'
// namespace selectors are matched against what it returns.
type Namespaces func(name string) (*corev1.Namespace, bool)

// Lookup returns the named namespace: as n knows it, else as NamespaceOf
// makes it; nil when there is no n (namespaces are not known at all, and
// selectors are the apiserver's to apply) or no name (cluster scope).
func (n Namespaces) Lookup(name string) *corev1.Namespace {
	if n == nil || name == "" {
		return nil
	}
	if ns, ok := n(name); ok {
		return ns
	}
	return NamespaceOf(name, nil)
}

// NamespaceOf is a namespace known only by name and the given labels, plus
// kubernetes.io/metadata.name, which the apiserver gives every namespace.
func NamespaceOf(name string, labels map[string]string) *corev1.Namespace {
	l := map[string]string{corev1.LabelMetadataName: name}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
	}
}
