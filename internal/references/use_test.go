package references

import (
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUse(t *testing.T) {
	s, cs := filled(t, ingresses, services)
	before := s.Len(cs[0])
	if before == 0 {
		t.Fatal("testdata holds no Ingress")
	}
	// A reload keeping the Ingresses, dropping the Services, adding Secrets.
	sec := compiled(t, secrets)
	again := compiled(t, ingresses)
	s.Use([]*Compiled{again, sec})
	if got := s.Kinds(); len(got) != 2 || got[0].Kind != "Secret" || got[1].Kind != "Ingress" {
		t.Errorf("kinds %v, want Ingress and Secret", got)
	}
	if n := s.Len(again); n != before {
		t.Errorf("the Ingresses kept: %d, want %d", n, before)
	}
	if _, err := s.ByKey(again, "host", key(t, "shop.example.com"), Self{}); err != nil {
		t.Errorf("a kept, complete kind: %v", err)
	}
	if _, err := s.All(cs[1], Self{}); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("a dropped kind: %v, want not registered", err)
	}
	if _, err := s.All(sec, Self{}); err == nil || !strings.Contains(err.Error(), "not listed yet") {
		t.Errorf("a new kind: %v, want not listed yet", err)
	}
	// A declaration of the kind with other indexes replaces the view.
	other := compiled(t, Declaration{Name: "ingresses", APIVersion: "networking.k8s.io/v1", Kind: "Ingress"})
	s.Use([]*Compiled{other})
	if _, err := s.ByKey(again, "host", key(t, "shop.example.com"), Self{}); err == nil {
		t.Error("a dropped view still answers")
	}
	if n := s.Len(other); n != before {
		t.Errorf("the new view: %d Ingresses, want %d", n, before)
	}
}

func TestOnChange(t *testing.T) {
	s := New()
	c := compiled(t, ingresses)
	s.Register(c)
	var mu sync.Mutex
	var got []string
	remove := s.OnChange(func(gvk schema.GroupVersionKind) {
		mu.Lock()
		got = append(got, gvk.Kind)
		mu.Unlock()
	})
	ing := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": "a", "namespace": "shop"}}}
	s.Complete(ingressGVK)
	s.Complete(ingressGVK) // already complete: no change
	s.Upsert(ing)
	s.Delete(ingressGVK, "shop", "a")
	s.Delete(ingressGVK, "shop", "a") // gone already: no change
	s.Upsert(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "a", "namespace": "shop"}}}) // not declared
	remove()
	s.Upsert(ing)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != "Ingress,Ingress,Ingress" {
		t.Errorf("changes %v, want complete, upsert, delete of Ingress", got)
	}
}
