package references

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
)

var (
	ingressGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
)

// testMapper knows Ingresses and Secrets; Reset does nothing (the test
// double of a discovery mapper that is never told of more).
type testMapper struct{ *meta.DefaultRESTMapper }

func (testMapper) Reset() {}

func newTestMapper() testMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(ingressGVK, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, meta.RESTScopeNamespace)
	return testMapper{m}
}

func ingress(ns, name, host string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": name, "namespace": ns,
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec": map[string]any{"rules": []any{map[string]any{"host": host}}}}}
	return u
}

// clusterOf is a Cluster filling a store of decls from fake clients holding
// objs, followed once.
func clusterOf(t *testing.T, react clienttesting.ReactionFunc, decls ...Declaration) (*Store, []*Compiled, *dynamicfake.FakeDynamicClient, *Cluster) {
	t.Helper()
	scheme := runtime.NewScheme()
	metav1.AddMetaToScheme(scheme)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{ingressGVR: "IngressList"},
		ingress("shop", "storefront", "shop.example.com"))
	if react != nil {
		dyn.PrependReactor("list", "ingresses", react)
	}
	secret := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: "shop", Labels: map[string]string{"team": "a"}}}
	mc := metadatafake.NewSimpleMetadataClient(scheme, secret)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := New()
	var cs []*Compiled
	for _, d := range decls {
		cs = append(cs, compiled(t, d))
	}
	s.Use(cs)
	c := newCluster(ctx, s, dyn, mc, newTestMapper())
	c.Follow()
	deadline := time.Now().Add(10 * time.Second)
	for c.Synced() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not synced: %v", c.Synced())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s, cs, dyn, c
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
	}
}

func TestClusterFollowsObjects(t *testing.T) {
	s, cs, dyn, _ := clusterOf(t, nil, ingresses)
	got, err := s.ByKey(cs[0], "host", key(t, "shop.example.com"), Self{})
	if err != nil || len(got) != 1 {
		t.Fatalf("listed: %v, %v", got, err)
	}
	if _, ok := got[0].Value().(map[string]any)["metadata"].(map[string]any)["managedFields"]; ok {
		t.Error("the store holds managedFields")
	}
	ctx := context.Background()
	if _, err := dyn.Resource(ingressGVR).Namespace("edge").Create(ctx, ingress("edge", "copy", "shop.example.com"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a created Ingress in the store", func() bool {
		got, _ := s.ByKey(cs[0], "host", key(t, "shop.example.com"), Self{})
		return len(got) == 2
	})
	if err := dyn.Resource(ingressGVR).Namespace("shop").Delete(ctx, "storefront", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a deleted Ingress out of the store", func() bool {
		got, _ := s.ByKey(cs[0], "host", key(t, "shop.example.com"), Self{})
		return len(got) == 1
	})
}

func TestClusterForbidden(t *testing.T) {
	forbid := func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(ingressGVR.GroupResource(), "", errors.New("RBAC: no"))
	}
	s, cs, _, _ := clusterOf(t, forbid, ingresses, secrets) // Synced: a forbidden kind does not hold readiness
	_, err := s.ByKey(cs[0], "host", key(t, "shop.example.com"), Self{})
	if !errors.Is(err, ErrNotListed) || !strings.Contains(err.Error(), "tollgate may not list ingresses.networking.k8s.io") {
		t.Errorf("lookup of a kind tollgate may not list: %v", err)
	}
	if v, err := s.Get(cs[1], "shop", "regcred", Self{}); err != nil || v == nil {
		t.Errorf("another kind: %v, %v", v, err)
	}
}

func TestClusterUnknownKind(t *testing.T) {
	widgets := Declaration{Name: "widgets", APIVersion: "example.com/v1", Kind: "Widget"}
	s, cs, _, _ := clusterOf(t, nil, widgets)
	if _, err := s.All(cs[0], Self{}); !errors.Is(err, ErrNotListed) || !strings.Contains(err.Error(), "serves no such kind") {
		t.Errorf("a kind the apiserver does not serve: %v", err)
	}
}

func TestClusterSecretsMetadataOnly(t *testing.T) {
	s, cs, _, _ := clusterOf(t, nil, secrets)
	v, err := s.Get(cs[0], "shop", "regcred", Self{})
	if err != nil || v == nil {
		t.Fatalf("regcred: %v, %v", v, err)
	}
	m := v.Value().(map[string]any)
	if m["kind"] != "Secret" || m["apiVersion"] != "v1" || m["metadata"].(map[string]any)["labels"].(map[string]any)["team"] != "a" {
		t.Errorf("secret %v, want its kind and metadata", m)
	}
	if len(m) != 3 {
		t.Errorf("secret %v, want apiVersion, kind and metadata alone", m)
	}
}

func TestClusterFollowDropsKinds(t *testing.T) {
	s, cs, _, c := clusterOf(t, nil, ingresses, secrets)
	s.Use([]*Compiled{cs[1]})
	c.Follow()
	c.mu.Lock()
	_, ingress := c.kinds[ingressGVK]
	n := len(c.kinds)
	c.mu.Unlock()
	if ingress || n != 1 {
		t.Errorf("%d kinds watched (Ingress: %v), want Secret alone", n, ingress)
	}
	if v, err := s.Get(cs[1], "shop", "regcred", Self{}); err != nil || v == nil {
		t.Errorf("the kind kept: %v, %v", v, err)
	}
}
