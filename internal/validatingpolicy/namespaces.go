package validatingpolicy

import (
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	listersv1 "k8s.io/client-go/listers/core/v1"

	"github.com/tollgate-dev/tollgate/internal/namespaces"
)

// needNamespace is what to do when tollgate lacks a namespace.
const needNamespace = "run with --kubeconfig or give the Namespace object"

// lister adapts Namespaces to the NamespaceLister the matcher reads, for
// one selector at a time.
type lister struct {
	namespaces namespaces.Func
	// namesOnly: the selector reads no label but kubernetes.io/metadata.name,
	// which every namespace has, known or not.
	namesOnly bool
	// missed is the namespace the selector needed and the lister did not know.
	missed string
}

// prepare readies the lister for the namespaceSelector of m.
func (l *lister) prepare(m *admissionregistrationv1.MatchResources) {
	l.missed = ""
	l.namesOnly = m == nil || namespaces.NamesOnly(m.NamespaceSelector)
}

// unknown is the error for the namespace the last selector missed, if any.
func (l *lister) unknown() error {
	if l.missed == "" {
		return nil
	}
	return fmt.Errorf("namespace %q labels unknown: %s", l.missed, needNamespace)
}

func (l *lister) List(labels.Selector) ([]*corev1.Namespace, error) {
	return nil, errors.New("not supported")
}

// Get never answers NotFound (the matcher would then ask a client): a
// namespace it does not know is, for a selector on names only, one with the
// label kubernetes.io/metadata.name, as the apiserver gives every
// namespace; for any other selector, an error.
func (l *lister) Get(name string) (*corev1.Namespace, error) {
	if l.namespaces != nil {
		if ns, ok := l.namespaces(name); ok {
			return ns, nil
		}
	}
	if l.namesOnly {
		return namespaces.Of(name, nil), nil
	}
	l.missed = name
	return nil, fmt.Errorf("namespace %q labels unknown", name)
}

var _ listersv1.NamespaceLister = &lister{}
