// Package namespaces is how namespaces look to policies' selectors: known
// by a lookup (an informer's, or the files' offline), or known only by
// name. Every namespace has the label kubernetes.io/metadata.name, so a
// selector that reads only that label decides without the namespace.
package namespaces

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Func returns a namespace by name, and whether it is known. Policies'
// namespace selectors are matched against what it returns.
type Func func(name string) (*corev1.Namespace, bool)

// Lookup returns the named namespace: as n knows it, else as Of
// makes it; nil when there is no n (namespaces are not known at all, and
// selectors are the apiserver's to apply) or no name (cluster scope).
func (n Func) Lookup(name string) *corev1.Namespace {
	if n == nil || name == "" {
		return nil
	}
	if ns, ok := n(name); ok {
		return ns
	}
	return Of(name, nil)
}

// Of is a namespace known only by name and the given labels, plus
// kubernetes.io/metadata.name, which the apiserver gives every namespace.
func Of(name string, labels map[string]string) *corev1.Namespace {
	l := map[string]string{corev1.LabelMetadataName: name}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
	}
}
