// Package audit evaluates the objects a live cluster already holds with the
// policies, as if each were created now: what a policy would break before it
// is loaded. It only lists, never writes, so a read-only user can run it.
// The engine decides every object, exceptions included, exactly as at
// admission; only policies whose verdict depends on the request itself
// (who asks, the previous version) are reported as skip, never guessed.
package audit

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// pageSize bounds each list call, so a large cluster is read in pages.
const pageSize = 500

// Progress is how far a scan has come.
type Progress struct {
	Resource        string // being listed
	Done, Resources int    // resources listed so far, of
	Objects         int    // objects evaluated so far
}

// Namespaces lists the cluster's namespaces, whose labels the policies'
// namespaceSelectors read.
func Namespaces(ctx context.Context, client dynamic.Interface) (namespaces.Func, error) {
	known := map[string]*corev1.Namespace{}
	err := list(ctx, client, Resource{GVR: corev1.SchemeGroupVersion.WithResource("namespaces"), Kind: "Namespace"}, func(u *unstructured.Unstructured) {
		known[u.GetName()] = namespaces.Of(u.GetName(), u.GetLabels())
	})
	if err != nil {
		return nil, fmt.Errorf("namespaceSelectors need the namespaces' labels: %w", err)
	}
	return func(name string) (*corev1.Namespace, bool) {
		ns, ok := known[name]
		if !ok {
			return namespaces.Of(name, nil), false
		}
		return ns, true
	}, nil
}

// Scan lists every object of the resources and evaluates it. progress,
// when set, is called after each page.
func Scan(ctx context.Context, client dynamic.Interface, eng *engine.Engine, resources []Resource, progress func(Progress)) ([]offline.Finding, error) {
	depends := Dependences(eng.Set())
	var out []offline.Finding
	for i, r := range resources {
		err := list(ctx, client, r, func(u *unstructured.Unstructured) {
			out = append(out, Evaluate(ctx, eng, r, u, depends))
		})
		if err != nil {
			return out, err
		}
		if progress != nil {
			progress(Progress{Resource: r.GVR.GroupResource().String(), Done: i + 1, Resources: len(resources), Objects: len(out)})
		}
	}
	return out, nil
}

func list(ctx context.Context, client dynamic.Interface, r Resource, each func(*unstructured.Unstructured)) error {
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		page, err := client.Resource(r.GVR).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("list %s: %w", r.GVR.GroupResource(), err)
		}
		for i := range page.Items {
			each(&page.Items[i])
		}
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

// Evaluate decides one stored object as a CREATE of it, with every
// validating group. depends names the policies whose verdict depends on the
// request alone, and on what: their results become skip.
func Evaluate(ctx context.Context, eng *engine.Engine, r Resource, u *unstructured.Unstructured, depends map[string]string) offline.Finding {
	gvk := r.GVR.GroupVersion().WithKind(r.Kind)
	u.SetGroupVersionKind(gvk)
	js, err := u.MarshalJSON()
	if err != nil {
		obj := &manifest.Object{JSON: js, GVK: gvk, Namespace: u.GetNamespace(), Name: u.GetName()}
		return offline.Finding{Object: obj, Allowed: true, Err: fmt.Errorf("%s: %w", obj, err)}
	}
	return EvaluateJSON(ctx, eng, r, js, u.GetNamespace(), u.GetName(), u.GetUID(), depends)
}

// EvaluateJSON is Evaluate of an object's JSON, whose apiVersion and kind
// are r's.
func EvaluateJSON(ctx context.Context, eng *engine.Engine, r Resource, js []byte, namespace, name string, uid types.UID, depends map[string]string) offline.Finding {
	gvk := r.GVR.GroupVersion().WithKind(r.Kind)
	obj := &manifest.Object{JSON: js, GVK: gvk, Namespace: namespace, Name: name}
	f := offline.Finding{Object: obj, Allowed: true}
	req := &admission.Request{
		UID:       "audit-" + string(uid),
		Kind:      gvk,
		Resource:  r.GVR,
		Name:      name,
		Namespace: namespace,
		Operation: admission.Create,
	}
	req.SetObjects(js, nil)
	for _, g := range eng.Set().Groups {
		if g.Action != policy.ActionValidate || !engine.InBackground(g) {
			continue
		}
		ev := eng.EvaluateStored(ctx, g, req)
		for _, res := range ev.Results {
			if d := depends[res.Policy]; d != "" && res.Outcome != engine.Skip {
				res.Outcome = engine.Skip
				res.Message = DependsMessage(d)
			}
			if res.Outcome == engine.Fail {
				f.Allowed = false
			}
			f.Results = append(f.Results, res)
		}
		f.Warnings = append(f.Warnings, ev.Response.Warnings...)
	}
	return f
}

// DependsMessage is what a skip result says of a policy whose verdict
// depends on d (RequestDependence) rather than on the stored object.
func DependsMessage(d string) string {
	return "the verdict depends on the request (" + d + "), not on the stored object"
}
