package audit

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/tollgate-dev/tollgate/internal/references"
)

// ListReferences fills a store with every object of each kind it holds
// declarations of, listed from the cluster, each kind then complete; a
// kind that cannot be mapped or listed (not served, or forbidden) is
// marked unavailable with the error, which each policy reading it then
// meets as an evaluation error its failurePolicy decides. It returns
// those errors too, for the user.
func ListReferences(ctx context.Context, client dynamic.Interface, mapper meta.RESTMapper, store *references.Store) []error {
	var errs []error
	for _, gvk := range store.Kinds() {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			err = fmt.Errorf("%s: %w", references.KindName(gvk), err)
			store.Unavailable(gvk, err)
			errs = append(errs, err)
			continue
		}
		r := Resource{GVR: m.Resource, Kind: gvk.Kind, Namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}
		err = list(ctx, client, r, func(u *unstructured.Unstructured) {
			u.SetGroupVersionKind(gvk)
			store.Upsert(u)
		})
		if err != nil {
			err = fmt.Errorf("%s: %w", references.KindName(gvk), err)
			store.Unavailable(gvk, err)
			errs = append(errs, err)
			continue
		}
		store.Complete(gvk)
	}
	return errs
}
