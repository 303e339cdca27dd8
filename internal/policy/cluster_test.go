package policy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// clusterObjects reads testdata/cluster/objects.yaml as a dynamic client
// lists them: VAPs and bindings apart.
func clusterObjects(t *testing.T) (vaps, bindings []*unstructured.Unstructured) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "cluster", "objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		if u.GetKind() == "ValidatingAdmissionPolicy" {
			vaps = append(vaps, u)
		} else {
			bindings = append(bindings, u)
		}
	}
	return vaps, bindings
}

// TestClusterVAPs: stored VAPs are decoded as config's are, with their
// bindings; one that does not compile is named in an error and left out;
// a binding of no VAP binds nothing.
func TestClusterVAPs(t *testing.T) {
	vaps, bindings := clusterObjects(t)
	ps, errs := ClusterVAPs(vaps, bindings)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `ValidatingAdmissionPolicy "broken" in the cluster`) {
		t.Errorf("errors = %v, want one naming the VAP broken", errs)
	}
	got := map[string][]string{}
	for _, p := range ps {
		if p.Origin() != OriginCluster || p.Source.String() != "the cluster's API" {
			t.Errorf("%s: origin %q, source %q", p.Name(), p.Origin(), p.Source)
		}
		var names []string
		for _, b := range p.VAP.Bindings {
			names = append(names, b.Name)
		}
		got[p.Name()] = names
	}
	want := map[string][]string{
		"replicas-limit":      {"replicas-limit-audit", "replicas-limit-prod"},
		"require-environment": {"require-environment"},
	}
	if len(got) != len(want) {
		t.Fatalf("policies = %v, want %v", got, want)
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s: bindings %v, want %v", name, got[name], w)
		}
	}
}

// TestWithCluster: the config's policies come first and win over a cluster
// VAP of the same name; the others join, each a group of its own.
func TestWithCluster(t *testing.T) {
	config, err := LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	vaps, bindings := clusterObjects(t)
	cluster, _ := ClusterVAPs(vaps, bindings)
	merged, shadowed := config.WithCluster(cluster)
	if !slices.Equal(shadowed, []string{"require-environment"}) {
		t.Errorf("shadowed = %v, want [require-environment]", shadowed)
	}
	wantNames := append(config.Names(), "replicas-limit")
	if !slices.Equal(merged.Names(), wantNames) {
		t.Errorf("names = %v, want %v", merged.Names(), wantNames)
	}
	for _, p := range merged.Policies {
		want := OriginConfig
		if p.Name() == "replicas-limit" {
			want = OriginCluster
		}
		if p.Origin() != want {
			t.Errorf("%s: origin %q, want %q", p.Name(), p.Origin(), want)
		}
	}
	g := merged.Group("replicas-limit")
	if g == nil || g.Kind != GroupVAP || len(g.BindingWebhooks) == 0 {
		t.Errorf("group of replicas-limit = %+v, want a VAP group with its binding webhooks", g)
	}
	if len(merged.Groups) != len(config.Groups)+1 {
		t.Errorf("%d groups, want %d", len(merged.Groups), len(config.Groups)+1)
	}
	if len(config.Policies) != len(config.Names()) || slices.Contains(config.Names(), "replicas-limit") {
		t.Error("WithCluster changed the config's set")
	}
}
