//go:build e2e

package kyvernodiff

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// answer is what the apiserver said to one dry-run create.
type answer struct {
	Allowed  bool
	Message  string // a webhook's denial, after "denied the request: " (webhook names differ)
	Other    string // any other error (the object is invalid, say): the same on both sides
	Warnings []string
}

func (a answer) String() string {
	switch {
	case a.Other != "":
		return "error: " + a.Other
	case a.Allowed && len(a.Warnings) == 0:
		return "allowed"
	case a.Allowed:
		return fmt.Sprintf("allowed, warnings %q", a.Warnings)
	}
	if len(a.Warnings) > 0 {
		return fmt.Sprintf("denied: %s (warnings %q)", a.Message, a.Warnings)
	}
	return "denied: " + a.Message
}

// TestKyvernoDifferential creates each policy's objects (server-side dry
// run) through Kyverno with the policies applied, then through tollgate
// serving the same files, on the same apiserver, and requires the same
// answer for every one.
func TestKyvernoDifferential(t *testing.T) {
	bin := os.Getenv("TOLLGATE_KYVERNO")
	if bin == "" {
		t.Skip("TOLLGATE_KYVERNO is unset: `make kyverno` builds the Kyverno pinned in hack/kyverno and prints its path; make e2e sets it")
	}
	start := time.Now()
	corpus, err := loadCorpus(corpusDir())
	if err != nil {
		t.Fatal(err)
	}
	edges, err := loadEdges()
	if err != nil {
		t.Fatal(err)
	}
	cases := append(corpus, edges...)
	pairs := 0
	for _, c := range cases {
		pairs += len(c.objects)
	}

	env, client, err := framework.StartControlPlane(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	if err := kyvernoCRDs(env.Config); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	kubeconfig := filepath.Join(work, "admin.kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range cases {
		if err := framework.EnsureNamespace(ctx, client, c.namespace, map[string]string{diffLabel: c.name}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("control plane and Kyverno's CRDs up after %s; %d policies, %d objects", time.Since(start).Round(100*time.Millisecond), len(cases), pairs)

	createBases(t, client, cases)

	// Kyverno, with the policies applied as a user applies them.
	phase := time.Now()
	stopKyverno := startKyverno(t, bin, work, kubeconfig, client)
	dyn := dynamic.NewForConfigOrDie(env.Config)
	applyPolicies(t, dyn, cases)
	var selectors []string
	for _, c := range cases {
		if c.namespaced {
			continue // Kyverno selects its namespace by name
		}
		selectors = append(selectors, c.name)
	}
	kyvernoWebhooksCover(t, client, selectors)
	kyverno := settled(t, env.Config, cases, "Kyverno")
	t.Logf("Kyverno: %s", time.Since(phase).Round(100*time.Millisecond))
	stopKyverno()

	// tollgate, serving the same documents.
	phase = time.Now()
	startTollgate(t, work, kubeconfig, cases)
	tollgate := settled(t, env.Config, cases, "tollgate")
	t.Logf("tollgate: %s", time.Since(phase).Round(100*time.Millisecond))

	denied, warned, other, differ, known := 0, 0, 0, 0, 0
	keys := slices.Sorted(maps.Keys(kyverno))
	for _, key := range keys {
		k, g := kyverno[key], tollgate[key]
		switch {
		case k.Other != "":
			other++
			t.Logf("%s: refused by the apiserver on both sides: %.150s", key, k.Other)
		case !k.Allowed:
			denied++
		case len(k.Warnings) > 0:
			warned++
		}
		why, isKnown := deliberate[key]
		switch {
		case k.String() != g.String() && isKnown:
			differ++
			known++
			t.Logf("%s, deliberately:\n  Kyverno:  %s\n  tollgate: %s\n  why: %s", key, k, g, why)
		case k.String() != g.String():
			differ++
			t.Errorf("%s:\n  Kyverno:  %s\n  tollgate: %s", key, k, g)
		case isKnown:
			t.Errorf("%s: listed as a deliberate difference, but both say %s", key, k)
		}
	}
	t.Logf("%d policies x their objects = %d requests per engine (%d of them UPDATEs): %d denied, %d admitted with warnings, %d admitted, %d invalid (refused by the apiserver itself); %d differ (%d deliberately); %s in all",
		len(cases), len(keys), updates(keys), denied, warned, len(keys)-denied-warned-other, other, differ, known, time.Since(start).Round(time.Second))
}

// deliberate are the answers where tollgate differs from Kyverno on
// purpose, by namespace/kind/name, with why (docs/policies.md says it too).
var deliberate = map[string]string{
	"kd-edge-namespaced/Deployment/web":                namespacedAutogen,
	"kd-edge-namespaced/Deployment/web" + updateSuffix: namespacedAutogen,
}

const namespacedAutogen = "Kyverno 1.19 sends a NamespacedValidatingPolicy the Pod controllers autogen covers only when the policy " +
	"has matchConditions, matchPolicy Exact or timeoutSeconds (pkg/controllers/webhook/validating.go gives the webhook shared by other " +
	"policies the autogen rules of a ValidatingPolicy only); its engine and its background scans check them (edge-namespaced-conditions " +
	"is denied by both); tollgate checks them on admission too"

// applyPolicies creates every policy and exception.
func applyPolicies(t *testing.T, dyn dynamic.Interface, cases []policyCase) {
	t.Helper()
	for _, c := range cases {
		for _, doc := range c.docs {
			var m map[string]any
			if err := yaml.Unmarshal(doc, &m); err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: m}
			gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
			if err != nil {
				t.Fatal(err)
			}
			resource := map[string]string{"ValidatingPolicy": "validatingpolicies", "NamespacedValidatingPolicy": "namespacedvalidatingpolicies", "PolicyException": "policyexceptions"}[u.GetKind()]
			r := dyn.Resource(gv.WithResource(resource))
			var ri dynamic.ResourceInterface = r
			if u.GetNamespace() != "" {
				ri = r.Namespace(u.GetNamespace())
			}
			// Kyverno's webhook for its own policies may not serve yet.
			var last error
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
				if _, last = ri.Create(context.Background(), u, metav1.CreateOptions{FieldValidation: "Strict"}); last == nil || apierrors.IsAlreadyExists(last) {
					last = nil
					break
				}
			}
			if last != nil {
				t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), last)
			}
		}
	}
}

// settled runs every request until two runs in a row give the same
// answers (webhook configurations reach the apiserver asynchronously), and
// returns them, keyed namespace/kind/name.
func settled(t *testing.T, cfg *rest.Config, cases []policyCase, engine string) map[string]answer {
	t.Helper()
	prev := run(t, cfg, cases)
	for i := 0; i < 5; i++ {
		time.Sleep(time.Second)
		next := run(t, cfg, cases)
		if same(prev, next) {
			return next
		}
		prev = next
	}
	t.Fatalf("%s: the answers still change after 6 runs", engine)
	return nil
}

func same(a, b map[string]answer) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k].String() != v.String() {
			return false
		}
	}
	return true
}

// run creates every object in its policy's namespace with dryRun=All, eight
// at a time, each worker with a client of its own so that a request's
// warnings are its own.
func run(t *testing.T, cfg *rest.Config, cases []policyCase) map[string]answer {
	t.Helper()
	type job struct {
		ns     string
		obj    *unstructured.Unstructured
		update bool // UPDATE the stored base Deployment to obj's template
	}
	jobs := make(chan job)
	out := map[string]answer{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		w := &framework.Warnings{}
		c := rest.CopyConfig(cfg)
		c.WarningHandler = w
		c.QPS, c.Burst = -1, -1
		dyn := dynamic.NewForConfigOrDie(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				o := j.obj.DeepCopy()
				o.SetNamespace(j.ns)
				key := j.ns + "/" + o.GetKind() + "/" + o.GetName()
				var err error
				if j.update {
					key += updateSuffix
					err = updateBase(dyn.Resource(kinds["Deployment"]).Namespace(j.ns), o)
				} else {
					_, err = dyn.Resource(kinds[o.GetKind()]).Namespace(j.ns).Create(context.Background(), o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				}
				a := answer{Allowed: err == nil, Warnings: w.Take()}
				sort.Strings(a.Warnings)
				if err != nil {
					msg := err.Error()
					var status apierrors.APIStatus
					if i := strings.Index(msg, "denied the request: "); i >= 0 && errors.As(err, &status) {
						a.Message = msg[i+len("denied the request: "):]
					} else {
						a.Other = msg
					}
				}
				mu.Lock()
				out[key] = a
				mu.Unlock()
			}
		}()
	}
	for _, c := range cases {
		for _, o := range c.objects {
			jobs <- job{c.namespace, o, false}
			if o.GetKind() == "Deployment" {
				jobs <- job{c.namespace, o, true}
			}
		}
	}
	close(jobs)
	wg.Wait()
	return out
}
