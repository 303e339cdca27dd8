package references

import (
	"fmt"
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

func TestUseFieldsGrow(t *testing.T) {
	s := New()
	narrow := compiled(t, ingresses)
	narrow.SetRead(Read{Values: [][]string{{"spec", "rules"}}})
	s.Use([]*Compiled{narrow})
	gen := s.Generation(ingressGVK)
	s.Complete(ingressGVK)
	s.Upsert(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": "a", "namespace": "shop", "uid": "u1"},
		"spec":     map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{"host": "a.example.com"}}},
		"status":   map[string]any{"loadBalancer": map[string]any{}}}})
	got, err := s.Get(narrow, "shop", "a", Self{})
	if err != nil || got == nil {
		t.Fatalf("a: %v, %v", got, err)
	}
	want := `map[apiVersion:networking.k8s.io/v1 kind:Ingress metadata:map[name:a namespace:shop] spec:map[rules:[map[host:a.example.com]]]]`
	if s := fmt.Sprint(got.Value()); s != want {
		t.Errorf("held %s\nwant %s", s, want)
	}
	// The same fields again, or fewer: kept as listed.
	s.Use([]*Compiled{narrow})
	if s.Generation(ingressGVK) != gen {
		t.Error("a reload reading the same fields made the kind again")
	}
	// A policy reading the status too: the kind is made again, to be listed again.
	wide := compiled(t, ingresses)
	wide.SetRead(Read{Values: [][]string{{"status"}}})
	s.Use([]*Compiled{narrow, wide})
	if s.Generation(ingressGVK) == gen {
		t.Error("a reload reading more fields kept objects held without them")
	}
	if _, err := s.Get(wide, "shop", "a", Self{}); err == nil || !strings.Contains(err.Error(), "not listed yet") {
		t.Errorf("the kind made again: %v, want not listed yet", err)
	}
}

func TestFieldNode(t *testing.T) {
	a := treeOf(Read{Values: [][]string{{"spec", "rules", "host"}}, Iterated: [][]string{{"spec", "rules"}}})
	b := treeOf(Read{Present: [][]string{{"spec", "tls"}}})
	u := union(a, b)
	if !u.covers(a) || !u.covers(b) || a.covers(u) {
		t.Errorf("union %s of %s and %s", u, a, b)
	}
	if union(a, nil) != nil || !(*fieldNode)(nil).covers(a) || a.covers(nil) {
		t.Error("nil is the whole object")
	}
	obj := map[string]any{"spec": map[string]any{
		"rules": []any{map[string]any{"host": "x", "http": map[string]any{}}},
		"tls":   []any{map[string]any{"hosts": []any{"x"}}}, "ingressClassName": "nginx"}}
	if got := fmt.Sprint(u.keep(obj)); got != "map[spec:map[rules:[map[host:x]] tls:[map[]]]]" {
		t.Errorf("kept %s", got)
	}
	// An iterated map is kept whole (its keys are read).
	m := treeOf(Read{Iterated: [][]string{{"metadata", "labels"}}})
	labels := map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "1", "b": "2"}}}
	if got := fmt.Sprint(m.keep(labels)); got != "map[metadata:map[labels:map[a:1 b:2]]]" {
		t.Errorf("kept %s", got)
	}
}
