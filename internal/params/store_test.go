package params

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/manifest"
)

const objects = `
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns1, labels: {x: "1"}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: ns1, labels: {x: "1"}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns2}}
- apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: limits.example.com}
  spec: {group: example.com, scope: Cluster, names: {kind: Limit, plural: limits}, versions: [{name: v1}]}
- {apiVersion: example.com/v1, kind: Limit, metadata: {name: global, namespace: ignored}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: nons}}
- {apiVersion: v1, kind: Secret, metadata: {name: a, namespace: ns1}}
`

var (
	cmKind    = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	limitKind = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Limit"}
)

// parse reads a YAML list of objects, each at "objects:N".
func parse(t *testing.T, docs string) []Object {
	t.Helper()
	var list []map[string]any
	if err := yaml.Unmarshal([]byte(docs), &list); err != nil {
		t.Fatal(err)
	}
	var objs []Object
	for i, o := range list {
		objs = append(objs, Object{Unstructured: &unstructured.Unstructured{Object: o}, Where: fmt.Sprintf("objects:%d", i+1)})
	}
	return objs
}

// newOffline is NewOffline with the kinds of the CRDs among objs.
func newOffline(t *testing.T, paramKinds []schema.GroupVersionKind, objs []Object) (*Store, error) {
	t.Helper()
	kinds := manifest.NewKinds()
	for _, o := range objs {
		if o.GroupVersionKind() == manifest.CRDKind {
			js, _ := o.MarshalJSON()
			if err := kinds.AddCRD(o.Where, js); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return NewOffline(ctx, Offline{ParamKinds: paramKinds, Objects: objs, Kinds: kinds})
}

func offlineStore(t *testing.T) *Store {
	t.Helper()
	s, err := newOffline(t, []schema.GroupVersionKind{cmKind, limitKind}, parse(t, objects))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCollect(t *testing.T) {
	s := offlineStore(t)
	cm := &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	limit := &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Limit"}
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WaitSynced(wait); err != nil {
		t.Fatal(err)
	}
	allow, deny := admissionregistrationv1.AllowAction, admissionregistrationv1.DenyAction
	for _, tc := range []struct {
		name      string
		kind      *admissionregistrationv1.ParamKind
		ref       *admissionregistrationv1.ParamRef
		namespace string
		want      []string // names; "<nil>" for a nil param
		err       string
	}{
		{name: "no paramKind: one nil param", ref: &admissionregistrationv1.ParamRef{Name: "a"}, namespace: "ns1", want: []string{"<nil>"}},
		{name: "no paramRef: one nil param", kind: cm, namespace: "ns1", want: []string{"<nil>"}},
		{name: "by name in the request's namespace", kind: cm, ref: &admissionregistrationv1.ParamRef{Name: "a", ParameterNotFoundAction: &deny}, namespace: "ns2", want: []string{"ns2/a"}},
		{name: "by name in the given namespace", kind: cm, ref: &admissionregistrationv1.ParamRef{Name: "a", Namespace: "ns1", ParameterNotFoundAction: &deny}, namespace: "ns2", want: []string{"ns1/a"}},
		{name: "no namespace given: the default namespace", kind: cm, ref: &admissionregistrationv1.ParamRef{Name: "nons", ParameterNotFoundAction: &deny}, namespace: "default", want: []string{"default/nons"}},
		{name: "not found, Allow", kind: cm, ref: &admissionregistrationv1.ParamRef{Name: "b", ParameterNotFoundAction: &allow}, namespace: "ns2"},
		{name: "not found, Deny", kind: cm, ref: &admissionregistrationv1.ParamRef{Name: "b", ParameterNotFoundAction: &deny}, namespace: "ns2",
			err: "no params found for policy binding with `Deny` parameterNotFoundAction"},
		{name: "namespaced kind, cluster-scoped request", kind: cm, ref: &admissionregistrationv1.ParamRef{Name: "a", ParameterNotFoundAction: &deny},
			err: "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"},
		{name: "selector: every match", kind: cm, ref: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "1"}}, ParameterNotFoundAction: &deny}, namespace: "ns1",
			want: []string{"ns1/a", "ns1/b"}},
		{name: "cluster-scoped kind", kind: limit, ref: &admissionregistrationv1.ParamRef{Name: "global", ParameterNotFoundAction: &deny}, namespace: "ns1", want: []string{"global"}},
		{name: "cluster-scoped kind with a namespace", kind: limit, ref: &admissionregistrationv1.ParamRef{Name: "global", Namespace: "ns1", ParameterNotFoundAction: &deny},
			err: "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Collect(tc.kind, tc.ref, tc.namespace)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range got {
				if o == nil {
					names = append(names, "<nil>")
					continue
				}
				u := o.(*unstructured.Unstructured)
				n := u.GetName()
				if u.GetNamespace() != "" {
					n = u.GetNamespace() + "/" + n
				}
				names = append(names, n)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.want) {
				t.Errorf("got %v, want %v", names, tc.want)
			}
		})
	}
}

func TestUseStartsAndStops(t *testing.T) {
	s := offlineStore(t)
	unknown := schema.GroupVersionKind{Group: "none.example.com", Version: "v1", Kind: "Thing"}
	s.Use([]schema.GroupVersionKind{cmKind, unknown})
	if len(s.kinds) != 2 || s.kinds[unknown].err == nil || s.kinds[cmKind].informer == nil {
		t.Fatalf("kinds %v", s.kinds)
	}
	if err := s.Kind(&admissionregistrationv1.ParamKind{APIVersion: "none.example.com/v1", Kind: "Thing"}); err == nil ||
		err.Error() != "failed to find resource referenced by paramKind: 'none.example.com/v1, Kind=Thing'" {
		t.Errorf("unknown kind: %v", err)
	}
	s.Use(nil)
	if len(s.kinds) != 0 {
		t.Errorf("kinds not stopped: %v", s.kinds)
	}
	if err := s.Synced(); err != nil {
		t.Errorf("nothing in use, yet %v", err)
	}
}

func TestNewOffline(t *testing.T) {
	for _, tc := range []struct {
		name       string
		paramKinds []schema.GroupVersionKind
		objects    string
		err        string
		indexed    map[string][]string // resource: keys
	}{
		{name: "only objects of param kinds are params; others may repeat", paramKinds: []schema.GroupVersionKind{cmKind}, objects: `
- {apiVersion: v1, kind: Pod, metadata: {name: web}}
- {apiVersion: v1, kind: Pod, metadata: {name: web}}
- {apiVersion: v1, kind: Pod, metadata: {name: web, namespace: other}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: web}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: web, namespace: other}}
`, indexed: map[string][]string{"configmaps": {"default/web", "other/web"}}},
		{name: "two params of one identity", paramKinds: []schema.GroupVersionKind{cmKind}, objects: `
- {apiVersion: v1, kind: ConfigMap, metadata: {name: limits, namespace: default}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: limits}}
`, err: "params: ConfigMap default/limits is given twice, at objects:1 and at objects:2"},
		{name: "a cluster-scoped param twice, once with a namespace", paramKinds: []schema.GroupVersionKind{limitKind}, objects: `
- apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: limits.example.com}
  spec: {group: example.com, scope: Cluster, names: {kind: Limit, plural: limits}, versions: [{name: v1, served: true}]}
- {apiVersion: example.com/v1, kind: Limit, metadata: {name: global}}
- {apiVersion: example.com/v1, kind: Limit, metadata: {name: global, namespace: x}}
`, err: "params: Limit global is given twice, at objects:2 and at objects:3"},
		{name: "a param at another version", paramKinds: []schema.GroupVersionKind{limitKind}, objects: `
- {apiVersion: example.com/v1beta1, kind: Limit, metadata: {name: global}}
`, err: "params: objects:1: Limit \"global\" is example.com/v1beta1; the policies read Limit.example.com params as v1, and tollgate does not convert between versions"},
		{name: "a param without a name", paramKinds: []schema.GroupVersionKind{cmKind}, objects: `
- {apiVersion: v1, kind: ConfigMap, metadata: {namespace: a}}
`, err: "params: objects:1: ConfigMap has neither metadata.name nor metadata.generateName"},
		{name: "a custom kind without CRD, guessed from its objects", paramKinds: []schema.GroupVersionKind{limitKind}, objects: `
- {apiVersion: example.com/v1, kind: Limit, metadata: {name: a, namespace: x}}
`, indexed: map[string][]string{"limits": {"x/a"}}},
		{name: "a custom kind with neither CRD nor objects is not mapped", paramKinds: []schema.GroupVersionKind{limitKind}, indexed: map[string][]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newOffline(t, tc.paramKinds, parse(t, tc.objects))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for gvr, idx := range s.src.(*offline).objects {
				keys := idx.ListKeys()
				slices.Sort(keys)
				got[gvr.Resource] = keys
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.indexed) {
				t.Errorf("indexed %v, want %v", got, tc.indexed)
			}
		})
	}
}

// TestUseFor: the store watches the kinds of every user; the server's
// alone hold readiness; OnChange hears the params of each kind watched.
func TestUseFor(t *testing.T) {
	s := offlineStore(t)
	s.Use(nil)
	changes := make(chan struct{}, 16)
	remove := s.OnChange(func(gvk schema.GroupVersionKind) {
		if gvk != cmKind {
			return
		}
		select {
		case changes <- struct{}{}:
		default:
		}
	})
	defer remove()
	unknown := schema.GroupVersionKind{Group: "none.example.com", Version: "v1", Kind: "Thing"}
	s.UseFor("audit", []schema.GroupVersionKind{cmKind, unknown})
	s.Use([]schema.GroupVersionKind{limitKind})
	if len(s.kinds) != 3 || s.kinds[cmKind].informer == nil || s.kinds[limitKind].informer == nil {
		t.Fatalf("kinds %v, want the server's and the audit's", s.kinds)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WaitSyncedFor(ctx, "audit"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-ctx.Done():
		t.Fatal("OnChange not called for the ConfigMaps listed")
	}
	got, err := s.Collect(&admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}, &admissionregistrationv1.ParamRef{Name: "a", Namespace: "ns2"}, "")
	if err != nil || len(got) != 1 {
		t.Errorf("the audit's kind: %v, %v", got, err)
	}
	s.Use(nil)
	if _, ok := s.kinds[cmKind]; !ok || len(s.kinds) != 2 {
		t.Errorf("the server's Use stopped the audit's kinds: %v", s.kinds)
	}
	s.UseFor("audit", nil)
	if len(s.kinds) != 0 {
		t.Errorf("kinds not stopped: %v", s.kinds)
	}
}
