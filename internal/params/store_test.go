package params

import (
	"context"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

const objects = `
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns1, labels: {x: "1"}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: ns1, labels: {x: "1"}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns2}}
- apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: limits.example.com}
  spec: {group: example.com, scope: Cluster, names: {kind: Limit, plural: limits}, versions: [{name: v1}]}
- {apiVersion: example.com/v1, kind: Limit, metadata: {name: global}}
`

func offlineStore(t *testing.T) *Store {
	t.Helper()
	var list []map[string]any
	if err := yaml.Unmarshal([]byte(objects), &list); err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, o := range list {
		objs = append(objs, &unstructured.Unstructured{Object: o})
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := NewOffline(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCollect(t *testing.T) {
	s := offlineStore(t)
	cm := &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	limit := &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Limit"}
	s.Use([]schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}, {Group: "example.com", Version: "v1", Kind: "Limit"}})
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
	cmKind := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
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
