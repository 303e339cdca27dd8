package references_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/references"
)

// stored is how many Ingresses the benchmarks store.
const stored = 10000

// ingress is an Ingress of one host, as kubectl would store it.
func ingress(i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": fmt.Sprintf("site-%d", i), "namespace": fmt.Sprintf("team-%d", i%100),
			"uid": fmt.Sprintf("00000000-0000-0000-0000-%012d", i), "resourceVersion": fmt.Sprint(100000 + i),
			"labels": map[string]any{"app.kubernetes.io/name": fmt.Sprintf("site-%d", i)}},
		"spec": map[string]any{"ingressClassName": "nginx", "rules": []any{map[string]any{
			"host": fmt.Sprintf("site-%d.example.com", i),
			"http": map[string]any{"paths": []any{map[string]any{"path": "/", "pathType": "Prefix",
				"backend": map[string]any{"service": map[string]any{"name": "web", "port": map[string]any{"number": int64(80)}}}}}},
		}}},
	}}
}

// ingressReview is the CREATE review of a new Ingress for host.
func ingressReview(b *testing.B, host string) *admission.Request {
	obj := ingress(stored + 1).Object
	obj["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["host"] = host
	js, err := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": map[string]any{
		"uid": "b1", "kind": map[string]any{"group": "networking.k8s.io", "version": "v1", "kind": "Ingress"},
		"resource": map[string]any{"group": "networking.k8s.io", "version": "v1", "resource": "ingresses"},
		"name":     obj["metadata"].(map[string]any)["name"], "namespace": obj["metadata"].(map[string]any)["namespace"],
		"operation": "CREATE", "userInfo": map[string]any{"username": "admin"}, "object": obj,
	}})
	if err != nil {
		b.Fatal(err)
	}
	review, err := admission.Decode(js)
	if err != nil {
		b.Fatal(err)
	}
	return &review.Request
}

// store is a store of the set's references holding n Ingresses.
func store(set *policy.Set, n int) *references.Store {
	st := set.NewReferenceStore()
	for i := range n {
		st.Upsert(ingress(i))
	}
	for _, gvk := range st.Kinds() {
		st.Complete(gvk)
	}
	return st
}

// reviewer reviews req with the policy file, references from st.
func reviewer(b *testing.B, file string, st func(*policy.Set) *references.Store) func(*admission.Request) admission.Response {
	set, err := policy.LoadPath(file)
	if err != nil {
		b.Fatal(err)
	}
	var ext external.Sources
	if st != nil {
		ext.References = st(set)
	}
	e := engine.New(set, engine.Options{External: ext})
	g := set.Groups[0]
	return func(req *admission.Request) admission.Response { return e.Review(context.Background(), g, req) }
}

// timed is the mean time of f over half a second, after a warm-up.
func timed(f func()) float64 {
	for range 1000 {
		f()
	}
	n, start := 0, time.Now()
	for time.Since(start) < 500*time.Millisecond {
		f()
		n++
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

var baseline struct {
	once sync.Once
	ns   float64
}

// BenchmarkUniqueIngressHost reviews the CREATE of an Ingress against the
// library's unique-ingress-host with 10,000 Ingresses stored (a host no
// other claims: the review admits, every host looked up), and reports
// what it adds to the same review by the same policy without the
// reference (testdata/unique-ingress-host-baseline.yaml): added-µs/op and
// the ratio.
func BenchmarkUniqueIngressHost(b *testing.B) {
	benchAdded(b, "../../policies/references/unique-ingress-host.yaml", func() float64 {
		baseline.once.Do(func() {
			without := reviewer(b, "testdata/unique-ingress-host-baseline.yaml", nil)
			req := ingressReview(b, "new.example.com")
			baseline.ns = timed(func() { without(req) })
		})
		return baseline.ns
	})
}

// benchAdded reviews, with 10,000 Ingresses stored, the CREATE of an
// Ingress whose host no other claims under the unique-host policy in
// file (admitted; a stored host must be denied), and reports what it adds
// to the baseline's ns/op: added-µs/op and the ratio.
func benchAdded(b *testing.B, file string, baselineNS func() float64) {
	req := ingressReview(b, "new.example.com")
	with := reviewer(b, file, func(s *policy.Set) *references.Store { return store(s, stored) })
	if r := with(req); !r.Allowed {
		b.Fatalf("denied: %s", r.Message)
	}
	if r := with(ingressReview(b, "site-7.example.com")); r.Allowed {
		b.Fatal("a host stored was admitted")
	}
	base := baselineNS()
	start := time.Now()
	n := 0
	for b.Loop() {
		with(req)
		n++
	}
	ns := float64(time.Since(start).Nanoseconds()) / float64(n)
	b.ReportMetric((ns-base)/1000, "added-µs/op")
	b.ReportMetric(ns/base, "ratio")
}

// BenchmarkStoreHeap fills a store with 10,000 Ingresses indexed by host
// and reports the heap they hold (runtime.MemStats, after a GC on either
// side): heap-bytes/10k and bytes/object.
func BenchmarkStoreHeap(b *testing.B) {
	set, err := policy.LoadPath("../../policies/references/unique-ingress-host.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var heap uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		st := set.NewReferenceStore()
		for i := range stored { // made here: the store holds them
			st.Upsert(ingress(i))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(st)
		heap = after.HeapAlloc - before.HeapAlloc
	}
	b.ReportMetric(float64(heap), "heap-bytes/10k")
	b.ReportMetric(float64(heap)/stored, "bytes/object")
}

// BenchmarkClusterHeap is BenchmarkStoreHeap through the path a cluster
// takes: 10,000 Ingresses listed by an informer (from a fake dynamic
// client, whose own copies are on the heap before and after) into the
// store. It reports what the informer's cache and the store hold together:
// heap-bytes/10k and bytes/object.
func BenchmarkClusterHeap(b *testing.B) {
	set, err := policy.LoadPath("../../policies/references/unique-ingress-host.yaml")
	if err != nil {
		b.Fatal(err)
	}
	scheme := k8sruntime.NewScheme()
	objs := make([]k8sruntime.Object, stored)
	for i := range objs {
		objs[i] = ingress(i)
	}
	gvr := schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{gvr: "IngressList"}, objs...)
	objs = nil
	var heap uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ctx, cancel := context.WithCancel(context.Background())
		st := references.New()
		st.Use(set.References())
		c := references.NewClusterFrom(ctx, st, dyn, nil, references.TestMapper())
		c.Follow()
		for c.Synced() != nil {
			time.Sleep(10 * time.Millisecond)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if n := st.Len(set.References()[0]); n != stored {
			b.Fatalf("%d Ingresses stored, want %d", n, stored)
		}
		heap = after.HeapAlloc - before.HeapAlloc
		// The informer's goroutines end, and let go of its cache, before
		// the next iteration measures.
		cancel()
		time.Sleep(500 * time.Millisecond)
	}
	b.ReportMetric(float64(heap), "heap-bytes/10k")
	b.ReportMetric(float64(heap)/stored, "bytes/object")
}

// BenchmarkKyvernoUniqueIngressHost is BenchmarkUniqueIngressHost for the
// same rule written as Kyverno writes it (testdata/kyverno-unique-ingress-host.yaml):
// resource.List of every Ingress, scanned per host, against the same
// policy without the List: added-µs/op and the ratio. The store gives
// what Kyverno's apiserver list gives, so a review pays for the whole
// list; a tollgate policy's index pays for its keys.
func BenchmarkKyvernoUniqueIngressHost(b *testing.B) {
	benchAdded(b, "testdata/kyverno-unique-ingress-host.yaml", func() float64 {
		without := reviewer(b, "testdata/kyverno-unique-ingress-host-baseline.yaml", nil)
		req := ingressReview(b, "new.example.com")
		return timed(func() { without(req) })
	})
}
