//go:build e2e

package kyvernodiff

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// The changes of stored objects the resource library's suites make
// (resourceSuite.change), each with its undo.

// changeAll makes (or, undo, takes back) every suite's change.
func changeAll(t *testing.T, dyn dynamic.Interface, undo bool) {
	t.Helper()
	for _, s := range resourceSuites {
		f := s.change.do
		if undo {
			f = s.change.undo
		}
		if err := f(context.Background(), dyn); err != nil {
			t.Fatalf("%s: %s (undo %v): %v", s.folder, s.change.what, undo, err)
		}
	}
}

// setData changes one key of a ConfigMap's data from old to to.
func setData(ns, name, key, to, old string) change {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	set := func(v string) func(context.Context, dynamic.Interface) error {
		return func(ctx context.Context, dyn dynamic.Interface) error {
			patch := fmt.Sprintf(`{"data": {%q: %q}}`, key, v)
			_, err := dyn.Resource(gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		}
	}
	return change{what: fmt.Sprintf("ConfigMap %s/%s %s: %q", ns, name, key, to), do: set(to), undo: set(old)}
}

// deleteStored deletes the stored object of a suite's file, and creates it
// again.
func deleteStored(gvr schema.GroupVersionResource, ns, file string) change {
	get := func() (*unstructured.Unstructured, error) {
		objs, err := readObjects(filepath.Join("testdata/kyverno-policies", file+".gz"))
		if err != nil {
			return nil, err
		}
		return objs[0], nil
	}
	return change{what: "delete " + file,
		do: func(ctx context.Context, dyn dynamic.Interface) error {
			o, err := get()
			if err != nil {
				return err
			}
			return dyn.Resource(gvr).Namespace(ns).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		},
		undo: func(ctx context.Context, dyn dynamic.Interface) error {
			o, err := get()
			if err != nil {
				return err
			}
			_, err = dyn.Resource(gvr).Namespace(ns).Create(ctx, o, metav1.CreateOptions{})
			return err
		}}
}

// createObject creates a (JSON) object of gvr, and deletes it.
func createObject(gvr schema.GroupVersionResource, doc string) change {
	var m map[string]any
	err := json.Unmarshal([]byte(doc), &m)
	o := &unstructured.Unstructured{Object: m}
	ri := func(dyn dynamic.Interface) dynamic.ResourceInterface {
		if o.GetNamespace() != "" {
			return dyn.Resource(gvr).Namespace(o.GetNamespace())
		}
		return dyn.Resource(gvr)
	}
	return change{what: fmt.Sprintf("create %s %s", o.GetKind(), o.GetName()),
		do: func(ctx context.Context, dyn dynamic.Interface) error {
			if err != nil {
				return err
			}
			_, err := ri(dyn).Create(ctx, o.DeepCopy(), metav1.CreateOptions{})
			return err
		},
		undo: func(ctx context.Context, dyn dynamic.Interface) error {
			if err != nil {
				return err
			}
			return ri(dyn).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		}}
}

// labelNamespace sets a label of a Namespace, and removes it.
func labelNamespace(ns, key, value string) change {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	patch := func(v any) func(context.Context, dynamic.Interface) error {
		return func(ctx context.Context, dyn dynamic.Interface) error {
			p, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: v}}})
			_, err := dyn.Resource(gvr).Patch(ctx, ns, types.MergePatchType, p, metav1.PatchOptions{})
			return err
		}
	}
	return change{what: fmt.Sprintf("Namespace %s label %s=%s", ns, key, value), do: patch(value), undo: patch(nil)}
}
