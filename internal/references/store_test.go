package references

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

var (
	ingressGVK = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}
	ingresses  = Declaration{Name: "ingresses", APIVersion: "networking.k8s.io/v1", Kind: "Ingress",
		Indexes: []Index{{Name: "host", Key: "has(object.spec.rules) ? object.spec.rules.map(r, r.host) : []"}}}
	services = Declaration{Name: "services", APIVersion: "v1", Kind: "Service",
		Indexes: []Index{{Name: "selector", Key: "object.spec.selector"}}}
	secrets = Declaration{Name: "secrets", APIVersion: "v1", Kind: "Secret"}
)

// objects are testdata/objects.yaml.
func objects(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open("testdata/objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	return out
}

func compiled(t testing.TB, d Declaration) *Compiled {
	t.Helper()
	c, errs := Compile(d, field.NewPath("spec", "references").Index(0))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return c
}

// filled is a store of the declarations, with testdata's objects, complete.
func filled(t testing.TB, decls ...Declaration) (*Store, []*Compiled) {
	t.Helper()
	s := New()
	var cs []*Compiled
	for _, d := range decls {
		c := compiled(t, d)
		s.Register(c)
		cs = append(cs, c)
	}
	for _, u := range objects(t) {
		s.Upsert(u)
	}
	for _, gvk := range s.Kinds() {
		s.Complete(gvk)
	}
	return s, cs
}

// names are the objects' namespace/name, comma-separated, or the error.
func names(vals []ref.Val, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var out []string
	for _, v := range vals {
		m := v.Value().(map[string]any)["metadata"].(map[string]any)
		ns, _ := m["namespace"].(string)
		out = append(out, ns+"/"+m["name"].(string))
	}
	return strings.Join(out, ",")
}

func key(t *testing.T, v any) string {
	t.Helper()
	k, err := Key(types.DefaultTypeAdapter.NativeToValue(v))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestByKey(t *testing.T) {
	s, cs := filled(t, ingresses, services)
	ing, svc := cs[0], cs[1]
	for _, tc := range []struct {
		name string
		c    *Compiled
		key  any
		self Self
		want string
	}{
		{"two claim a host", ing, "shop.example.com", Self{}, "edge/copy,shop/shop"},
		{"an UPDATE does not see itself", ing, "shop.example.com", Self{GroupKind: ingressGVK.GroupKind(), Namespace: "shop", Name: "shop"}, "edge/copy"},
		{"another kind's namesake is not self", ing, "api.example.com", Self{GroupKind: schema.GroupKind{Kind: "Service"}, Namespace: "shop", Name: "shop"}, "shop/shop"},
		{"a CREATE with generateName has no name", ing, "api.example.com", Self{GroupKind: ingressGVK.GroupKind(), Namespace: "shop"}, "shop/shop"},
		{"no one claims it", ing, "docs.example.com", Self{}, ""},
		{"a map key is one key, whatever its order", svc, map[string]any{"tier": "front", "app": "web"}, Self{}, "shop/web"},
		{"a smaller map is another key", svc, map[string]any{"app": "web"}, Self{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := names(s.ByKey(tc.c, tc.c.IndexNames()[0], key(t, tc.key), tc.self))
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestUpdateAndDelete(t *testing.T) {
	s, cs := filled(t, ingresses)
	c := cs[0]
	byHost := func(h string) string {
		return names(s.ByKey(c, "host", key(t, h), Self{}))
	}
	moved := objects(t)[1].DeepCopy() // edge/copy, now for docs.example.com
	if err := unstructured.SetNestedSlice(moved.Object, []any{map[string]any{"host": "docs.example.com"}}, "spec", "rules"); err != nil {
		t.Fatal(err)
	}
	s.Upsert(moved)
	if got := byHost("shop.example.com"); got != "shop/shop" {
		t.Errorf("after the update, shop.example.com: %q, want shop/shop", got)
	}
	if got := byHost("docs.example.com"); got != "edge/copy" {
		t.Errorf("after the update, docs.example.com: %q, want edge/copy", got)
	}
	s.Delete(ingressGVK, "edge", "copy")
	if got := byHost("docs.example.com"); got != "" {
		t.Errorf("after the delete, docs.example.com: %q, want none", got)
	}
	if n := s.Len(c); n != 2 {
		t.Errorf("%d ingresses stored, want 2", n)
	}
}

func TestScope(t *testing.T) {
	inShop := ingresses
	inShop.Namespaces = []string{"shop"}
	labelled := ingresses
	labelled.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "payments"}}
	s, cs := filled(t, ingresses, inShop, labelled)
	for i, want := range []string{"edge/copy,edge/no-rules,shop/shop", "shop/shop", "shop/shop"} {
		if got := names(s.All(cs[i], Self{})); got != want {
			t.Errorf("declaration %d: %q, want %q", i, got, want)
		}
	}
	if got := names(s.InNamespace(cs[0], "edge", Self{})); got != "edge/copy,edge/no-rules" {
		t.Errorf("in edge: %q", got)
	}
}

func TestNotListed(t *testing.T) {
	s := New()
	c := compiled(t, ingresses)
	s.Register(c)
	_, err := s.ByKey(c, "host", key(t, "x"), Self{})
	if !errors.Is(err, ErrNotListed) || !strings.Contains(err.Error(), "Ingress (networking.k8s.io/v1)") {
		t.Errorf("a kind never listed: %v, want ErrNotListed naming the kind", err)
	}
	why := errors.New("tollgate may not list ingresses.networking.k8s.io")
	s.Unavailable(ingressGVK, why)
	if _, err := s.All(c, Self{}); !errors.Is(err, why) {
		t.Errorf("an unavailable kind: %v, want the reason", err)
	}
	s.Complete(ingressGVK)
	if got, err := s.All(c, Self{}); err != nil || len(got) != 0 {
		t.Errorf("a complete kind without objects: %v, %v; want none", got, err)
	}
}

func TestSecretsByNameOnly(t *testing.T) {
	s, cs := filled(t, secrets)
	v, err := s.Get(cs[0], "shop", "regcred", Self{})
	if err != nil || v == nil {
		t.Fatalf("regcred: %v, %v", v, err)
	}
	m := v.Value().(map[string]any)
	if _, ok := m["data"]; ok {
		t.Error("the store holds a Secret's data")
	}
	if _, ok := m["metadata"].(map[string]any)["managedFields"]; ok {
		t.Error("the store holds managedFields")
	}
	if _, ok := m["type"]; ok {
		t.Error("the store holds a Secret's type, which a cluster's metadata-only informer does not give")
	}
	if missing, err := s.Get(cs[0], "shop", "nope", Self{}); err != nil || missing != nil {
		t.Errorf("a Secret that does not exist: %v, %v", missing, err)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Declaration
		want string
	}{
		{"name not an identifier", Declaration{Name: "my-ingresses", APIVersion: "v1", Kind: "Service"}, "spec.references[0].name"},
		{"no kind", Declaration{Name: "x", APIVersion: "v1"}, "spec.references[0].kind"},
		{"bad apiVersion", Declaration{Name: "x", APIVersion: "a/b/c", Kind: "X"}, "spec.references[0].apiVersion"},
		{"key does not compile", Declaration{Name: "x", APIVersion: "v1", Kind: "Service", Indexes: []Index{{Name: "k", Key: "object.spec."}}}, "spec.references[0].indexes[0].key"},
		{"index twice", Declaration{Name: "x", APIVersion: "v1", Kind: "Service", Indexes: []Index{{Name: "k", Key: "1"}, {Name: "k", Key: "2"}}}, "spec.references[0].indexes[1].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := Compile(tc.d, field.NewPath("spec", "references").Index(0))
			if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want) {
				t.Errorf("errors %v, want one at %s", errs, tc.want)
			}
		})
	}
}

func TestKeyProblems(t *testing.T) {
	strict := Declaration{Name: "ingresses", APIVersion: "networking.k8s.io/v1", Kind: "Ingress",
		Indexes: []Index{{Name: "host", Key: "object.spec.rules.map(r, r.host)"}}}
	s, _ := filled(t, strict)
	p := s.Problems()
	if len(p) != 1 || !strings.Contains(p[0], "edge/no-rules") {
		t.Errorf("problems %q, want the Ingress without rules", p)
	}
}
