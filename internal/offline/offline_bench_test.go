package offline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// twentyPolicies are ten label policies and ten injection policies, each
// injection policy selecting its own namespace label.
func twentyPolicies(t testing.TB) *policy.Set {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "apiVersion: tollgate.dev/v1alpha1\nkind: Policy\nmetadata: {name: label-%d}\nspec:\n  match: {resources: [pods]}\n  validate: {labels: [{key: label-%d, values: [a, b]}]}\n---\n", i, i%3)
		fmt.Fprintf(&b, "apiVersion: tollgate.dev/v1alpha1\nkind: Policy\nmetadata: {name: inject-%d}\nspec:\n  match: {resources: [pods], namespaceSelector: {matchLabels: {inject-%d: enabled}}}\n  inject:\n    containers: [{name: side-%d, image: 'sidecar:%d', volumeMounts: [{name: vol-%d, mountPath: /v}]}]\n    volumes: [{name: vol-%d, emptyDir: {}}]\n---\n", i, i%4, i, i, i, i)
	}
	ps, err := policy.Parse("bench.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// manifests writes n Pods across 8 namespaces into one multi-document file.
func manifests(t testing.TB, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `apiVersion: v1
kind: Pod
metadata:
  name: pod-%d
  namespace: ns-%d
  labels: {app: web, label-0: a, label-1: %s, label-2: b}
  annotations: {example.com/owner: team-%d}
spec:
  containers:
  - name: app
    image: registry.example.com/app:%d
    ports: [{containerPort: 8080}]
    resources: {requests: {cpu: 100m, memory: 64Mi}}
---
`, i, i%8, []string{"a", "c"}[i%2], i%5, i)
	}
	f := filepath.Join(t.TempDir(), "pods.yaml")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func benchEngine(t testing.TB) *engine.Engine {
	return engine.New(twentyPolicies(t), engine.Options{Namespaces: func(ns string) (*corev1.Namespace, bool) {
		// ns-0 .. ns-3 enable one injection label each.
		var i int
		if _, err := fmt.Sscanf(ns, "ns-%d", &i); err != nil || i > 3 {
			return nil, false
		}
		return namespaces.Of(ns, map[string]string{fmt.Sprintf("inject-%d", i): "enabled"}), true
	}})
}

func TestCheckCorpusSmoke(t *testing.T) {
	eng := benchEngine(t)
	objs, err := manifest.Read([]string{manifests(t, 40)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	findings := Run(context.Background(), eng, objs, Options{})
	if len(findings) != 40 {
		t.Fatalf("%d findings", len(findings))
	}
	denied, patched := 0, 0
	for _, f := range findings {
		if f.Err != nil {
			t.Fatal(f.Err)
		}
		if !f.Allowed {
			denied++
		}
		if f.Patched != nil {
			patched++
		}
		if len(f.Results) != 20 {
			t.Errorf("%s: %d results, want one per policy", f.Object, len(f.Results))
		}
	}
	// label-1 is "c" on odd pods: denied; ns-0..ns-3 (half the pods) get injections.
	if denied != 20 || patched != 20 {
		t.Errorf("denied %d, patched %d; want 20 and 20", denied, patched)
	}
}

// BenchmarkCheck10k reads and checks 10,000 Pod manifests against 20
// policies, as `tollgate check` does. One iteration is the whole corpus.
func BenchmarkCheck10k(b *testing.B) {
	eng := benchEngine(b)
	file := manifests(b, 10_000)
	b.ResetTimer()
	for range b.N {
		objs, err := manifest.Read([]string{file}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if f := Run(context.Background(), eng, objs, Options{}); len(f) != 10_000 {
			b.Fatal(len(f))
		}
	}
}
