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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// answer is what the apiserver said to one dry-run create.
type answer struct {
	Allowed  bool     `json:"allowed"`
	Message  string   `json:"message,omitempty"` // a webhook's denial, after "denied the request: " (webhook names differ)
	Other    string   `json:"other,omitempty"`   // any other error (the object is invalid, say): the same on both sides
	Warnings []string `json:"warnings,omitempty"`
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
// run) through tollgate serving the policies, and requires for every one
// Kyverno's answer to the same request on the same apiserver; then it
// changes what the resource library's policies read and requires Kyverno's
// answers again (resources_test.go). Kyverno's answers come from
// recordFile; with TOLLGATE_KYVERNO set (make peers) they come from that
// Kyverno binary, run first with the policies applied, and must be the
// recorded ones, or, with TOLLGATE_KYVERNO_RECORD set too, are recorded.
func TestKyvernoDifferential(t *testing.T) {
	bin := os.Getenv("TOLLGATE_KYVERNO")
	record := os.Getenv("TOLLGATE_KYVERNO_RECORD") != ""
	if record && bin == "" {
		t.Fatal("TOLLGATE_KYVERNO_RECORD records the answers of the Kyverno binary TOLLGATE_KYVERNO names, and it is unset: run make peers")
	}
	start := time.Now()
	corpus := loadCases(t)
	cases, suites := corpus.all, corpus.suites
	pairs, policies := 0, 0
	for _, c := range cases {
		pairs += len(c.objects) + len(c.execs)
		if len(c.docs) > 0 {
			policies++
		}
	}
	key, err := recordKey(cases, corpus.stored)
	if err != nil {
		t.Fatal(err)
	}
	var rec recording
	var recErr error // a live run goes on without a valid recording
	if !record {
		if rec, recErr = readRecording(key); recErr != nil && bin == "" {
			t.Fatal(recErr)
		}
	}

	env, client, err := framework.StartControlPlane(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	work := t.TempDir()
	kubeconfig := filepath.Join(work, "admin.kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range cases {
		labels := map[string]string{diffLabel: c.name}
		maps.Copy(labels, c.nsLabels)
		if err := framework.EnsureNamespace(ctx, client, c.namespace, labels); err != nil {
			t.Fatal(err)
		}
		if len(c.nsAnnotations) > 0 {
			ns, err := client.CoreV1().Namespaces().Get(ctx, c.namespace, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ns.Annotations = c.nsAnnotations
			if _, err := client.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("control plane up after %s; %d policies, %d objects", time.Since(start).Round(100*time.Millisecond), policies, pairs)

	createBases(t, client, cases)
	storeObjects(t, env.Config, corpus.stored)

	var kyverno, kyvernoChanged map[string]answer
	if bin != "" {
		kyverno, kyvernoChanged = runKyverno(t, bin, work, kubeconfig, env.Config, client, cases, suites)
		live := key
		live.Answers, live.Changed = kyverno, kyvernoChanged
		switch {
		case record:
			if err := live.write(); err != nil {
				t.Fatal(err)
			}
			t.Logf("Kyverno's %d answers (and %d after the change) recorded in %s", len(kyverno), len(kyvernoChanged), recordFile)
		case recErr != nil:
			t.Errorf("%v (Kyverno live is compared with tollgate below)", recErr)
		default:
			recordedAgree(t, rec, live)
		}
	} else {
		kyverno, kyvernoChanged = rec.Answers, rec.Changed
		t.Logf("Kyverno %s's answers from %s (make peers runs it live)", rec.Kyverno, recordFile)
	}
	summarize(t, append(slices.Clone(corpus.resourceEdges), suites...), kyverno)
	changed(t, suitesOf(suites), kyverno, kyvernoChanged)

	// tollgate, serving the same documents.
	phase := time.Now()
	startTollgate(t, work, kubeconfig, cases)
	tollgate := settled(t, env.Config, cases, "tollgate")
	t.Logf("tollgate: %s", time.Since(phase).Round(100*time.Millisecond))
	followChanges(t, env.Config, suites, kyvernoChanged)
	for _, key := range slices.Sorted(maps.Keys(tollgate)) {
		if _, ok := kyverno[key]; !ok {
			t.Errorf("%s: a request tollgate answered and Kyverno has no answer to", key)
		}
	}

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
	t.Logf("%d policies x their objects = %d requests per engine (%d of them UPDATEs, %d CONNECTs), %d more after a change of stored objects: %d denied, %d admitted with warnings, %d admitted, %d invalid (refused by the apiserver itself); %d differ (%d deliberately); %s in all",
		policies, len(keys), withSuffix(keys, updateSuffix), withSuffix(keys, connectSuffix), len(kyvernoChanged), denied, warned, len(keys)-denied-warned-other, other, differ, known, time.Since(start).Round(time.Second))
}

// deliberate are the answers where tollgate differs from Kyverno on
// purpose, by namespace/kind/name, with why (docs/kyverno-tests.md says it too).
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
		update bool   // UPDATE the stored base Deployment to obj's template
		exec   string // CONNECT: exec into this stored Pod
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
		core := kubernetes.NewForConfigOrDie(c).CoreV1().RESTClient()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				var key string
				var err error
				switch {
				case j.exec != "":
					key = j.ns + "/Pod/" + j.exec + connectSuffix
					err = execPod(core, j.ns, j.exec)
				case j.update:
					key = j.ns + "/" + j.obj.GetKind() + "/" + j.obj.GetName() + updateSuffix
					err = updateBase(dyn.Resource(kinds["Deployment"]).Namespace(j.ns), j.obj.DeepCopy())
				default:
					// A cluster-scoped object is keyed by its policy's
					// namespace too, and created in none.
					o := j.obj.DeepCopy()
					key = j.ns + "/" + o.GetKind() + "/" + o.GetName()
					gvr, ok := kinds[o.GetKind()]
					if !ok {
						gvr = otherKinds[o.GetKind()]
					}
					var r dynamic.ResourceInterface = dyn.Resource(gvr)
					if !clusterKinds[o.GetKind()] {
						o.SetNamespace(j.ns)
						r = dyn.Resource(gvr).Namespace(j.ns)
					}
					_, err = r.Create(context.Background(), o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
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
			jobs <- job{ns: c.namespace, obj: o}
			if o.GetKind() == "Deployment" {
				jobs <- job{ns: c.namespace, obj: o, update: true}
			}
		}
		for _, p := range c.execs {
			jobs <- job{ns: c.namespace, exec: p}
		}
	}
	close(jobs)
	wg.Wait()
	return out
}
