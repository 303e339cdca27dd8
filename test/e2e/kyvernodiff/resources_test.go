//go:build e2e

package kyvernodiff

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// resourceSuite is one of kyverno/policies' ValidatingPolicies that read
// objects with Kyverno's resource library (resource.Get, resource.List) and
// no other Kyverno-only library: testdata/kyverno-policies, stored by
// test/corpus/add.sh at the revision its SOURCE names, beside its LICENSE.
// The policy is applied as the others are (isolate: validationActions
// [Deny], which its chainsaw test patches in too, and a namespaceSelector on
// its namespaces); the objects it reads are stored in the apiserver before
// any webhook is registered; its requests are its suites' objects. Objects
// without a namespace, or in default, go to kd-<folder>; any other
// namespace they name is made, labelled for the policy, with the labels and
// annotations of the suite's Namespace of that name.
type resourceSuite struct {
	folder   string   // under other-vpol
	stored   []string // files of the objects the policy reads (and the Namespaces)
	requests []string // files of the objects created with dryRun (under the suite, or testdata/...)
	exec     bool     // the requests are CONNECTs of pods/exec on the stored Pods
	change   change   // a change of the stored objects that changes an answer
}

// change changes stored objects (do) and puts them back (undo).
type change struct {
	what     string
	do, undo func(context.Context, dynamic.Interface) error
}

const suiteDir = "testdata/kyverno-policies/other-vpol"

// resourceSuites are all seven such policies of kyverno/policies (at
// SOURCE's revision). Left out: block-pod-exec-by-namespace-label's
// Deployments, whose Pods its chainsaw test execs into (no
// controller-manager makes them here).
var resourceSuites = []resourceSuite{
	{
		folder:   "advanced-restrict-image-registries",
		stored:   []string{".chainsaw-test/ns-01.yaml", ".chainsaw-test/cm.yaml"},
		requests: []string{".kyverno-test/resource.yaml", ".chainsaw-test/pod-good.yaml", ".chainsaw-test/pod-bad.yaml", ".chainsaw-test/podcontroller-good.yaml", ".chainsaw-test/podcontroller-bad.yaml"},
		change:   setData("default", "clusterregistries", "registries", "ghcr.io", "ghcr.io, myregistry"),
	},
	{
		folder:   "allowed-pod-priorities",
		stored:   []string{".chainsaw-test/cm.yaml", ".chainsaw-test/ns.yaml", ".chainsaw-test/pc.yaml"},
		requests: []string{".kyverno-test/resource.yaml", ".chainsaw-test/pod-good.yaml", ".chainsaw-test/pod-bad.yaml", ".chainsaw-test/podcontroller-good.yaml", ".chainsaw-test/podcontroller-bad.yaml"},
		change:   setData("default", "allowed-pod-priorities", "pod-priority-ns", "high, medium", "high, medium, low"),
	},
	{
		folder:   "check-hpa-exists",
		stored:   []string{".chainsaw-test/hpa.yaml"},
		requests: []string{".kyverno-test/resource.yaml", ".chainsaw-test/deployment-with-hpa-good.yaml", ".chainsaw-test/deployment-without-hpa-bad.yaml"},
		change:   deleteStored(schema.GroupVersionResource{Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers"}, "kd-check-hpa-exists", "other-vpol/check-hpa-exists/.chainsaw-test/hpa.yaml"),
	},
	{
		folder:   "exclude-namespaces-dynamically",
		stored:   []string{".chainsaw-test/cm.yaml", ".chainsaw-test/ns.yaml"},
		requests: []string{".chainsaw-test/pod-good.yaml", ".chainsaw-test/pod-bad.yaml", ".chainsaw-test/podcontroller-good.yaml", ".chainsaw-test/podcontroller-bad.yaml"},
		change:   setData("default", "namespace-filters", "exclude", "exclude-ns", "exclude-ns, exclude-ns-2"),
	},
	{
		folder:   "unique-ingress-paths",
		stored:   []string{".chainsaw-test/ingress.yaml"},
		requests: []string{".chainsaw-test/ingress-good.yaml", ".chainsaw-test/ingress-bad.yaml"},
		change:   createObject(schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, takenPath),
	},
	{
		// The apiserver calls the webhooks of a CONNECT before it looks for
		// the Pod's node: admitted, it refuses the exec itself (no node).
		folder: "block-pod-exec-by-namespace-label",
		stored: []string{".chainsaw-test/ns.yaml", ".chainsaw-test/pods.yaml"},
		exec:   true,
		change: labelNamespace("pod-exec-label-ns04", "exec", "false"),
	},
	{
		folder:   "inspect-csr",
		stored:   []string{".chainsaw-test/crolb-user.yaml"},
		requests: []string{"testdata/resource-requests.yaml"},
		change:   createObject(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, authenticatedBinding),
	},
}

// takenPath is an Ingress in a namespace no policy selects, on a path that
// unique-ingress-paths' goodingress02 asks for.
const takenPath = `{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "kd-taken", "namespace": "default"},
 "spec": {"rules": [{"host": "taken", "http": {"paths": [{"path": "/abc/def", "pathType": "Prefix",
 "backend": {"service": {"name": "demo-svc", "port": {"number": 8080}}}}]}}]}}`

// authenticatedBinding binds every authenticated user (the requester of
// inspect-csr's CSR among them) to the suite's ClusterRole.
const authenticatedBinding = `{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "kd-authenticated-csr"},
 "subjects": [{"kind": "Group", "name": "system:authenticated", "apiGroup": "rbac.authorization.k8s.io"}],
 "roleRef": {"kind": "ClusterRole", "name": "csr-manager", "apiGroup": "rbac.authorization.k8s.io"}}`

// resourceCases are the suites' cases, one per namespace (the policy's
// documents go with kd-<folder>'s), and the objects to store before any
// request: the suites' and resource-edge-objects.yaml's.
func resourceCases() ([]policyCase, []*unstructured.Unstructured, error) {
	var cases []policyCase
	stored, err := readObjects("testdata/resource-edge-objects.yaml")
	if err != nil {
		return nil, nil, err
	}
	for _, s := range resourceSuites {
		dir := filepath.Join(suiteDir, s.folder)
		policy, err := gunzip(filepath.Join(dir, s.folder+".yaml.gz"))
		if err != nil {
			return nil, nil, err
		}
		doc, err := isolate(policy, s.folder, true)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.folder, err)
		}
		home := "kd-" + s.folder
		byNS := map[string]*policyCase{home: {name: s.folder, namespace: home, docs: [][]byte{doc}}}
		order := []string{home}
		caseOf := func(ns string) *policyCase {
			if ns == "" || ns == "default" {
				ns = home
			}
			if byNS[ns] == nil {
				byNS[ns] = &policyCase{name: s.folder, namespace: ns}
				order = append(order, ns)
			}
			return byNS[ns]
		}
		for _, f := range s.stored {
			objs, err := readObjects(filepath.Join(dir, f+".gz"))
			if err != nil {
				return nil, nil, err
			}
			for _, o := range objs {
				switch {
				case o.GetKind() == "Namespace":
					c := caseOf(o.GetName())
					c.nsLabels, c.nsAnnotations = o.GetLabels(), o.GetAnnotations()
					continue
				case o.GetKind() == "Pod" && s.exec:
					c := caseOf(o.GetNamespace())
					c.execs = append(c.execs, o.GetName())
				}
				if o.GetNamespace() == "" && o.GetKind() != "PriorityClass" && !strings.HasPrefix(o.GetKind(), "Cluster") {
					o.SetNamespace(home)
				}
				stored = append(stored, o)
			}
		}
		seen := map[string]bool{}
		for _, f := range s.requests {
			path := filepath.Join(dir, f+".gz")
			if strings.HasPrefix(f, "testdata/") {
				path = f
			}
			objs, err := readObjects(path)
			if err != nil {
				return nil, nil, err
			}
			for _, o := range objs {
				c := caseOf(o.GetNamespace())
				key := c.namespace + "/" + o.GetKind() + "/" + o.GetName()
				if seen[key] {
					continue // the suites repeat objects
				}
				seen[key] = true
				o.SetNamespace("")
				c.objects = append(c.objects, o)
			}
		}
		for _, ns := range order {
			cases = append(cases, *byNS[ns])
		}
	}
	return cases, stored, nil
}

// readObjects are the documents of a file (gzipped if it ends in .gz).
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	var raw []byte
	var err error
	if strings.HasSuffix(path, ".gz") {
		raw, err = gunzip(path)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, doc := range splitYAML(raw) {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if m != nil {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out, nil
}

// storeObjects creates the objects the policies read.
func storeObjects(t *testing.T, cfg *rest.Config, objs []*unstructured.Unstructured) {
	t.Helper()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg)))
	dyn := dynamic.NewForConfigOrDie(cfg)
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if o.GetNamespace() != "" {
			r = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		if _, err := r.Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatalf("store %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	t.Logf("%d objects stored for the resource library's policies", len(objs))
}

// suiteOf is the suite of each key's namespace, of the suites' cases.
type suiteOf map[string]string

func suitesOf(cases []policyCase) suiteOf {
	m := suiteOf{}
	for _, c := range cases {
		m[c.namespace] = c.name
	}
	return m
}

func (m suiteOf) of(key string) string {
	ns, _, _ := strings.Cut(key, "/")
	return m[ns]
}

// changed requires that each suite's change changes at least one of
// Kyverno's answers, or the check that tollgate follows could not fail.
func changed(t *testing.T, suites suiteOf, before, after map[string]answer) {
	t.Helper()
	for _, s := range resourceSuites {
		n := 0
		for _, k := range slices.Sorted(maps.Keys(after)) {
			if a := after[k]; suites.of(k) == s.folder && before[k].String() != a.String() {
				n++
				t.Logf("%s, after %s:\n  Kyverno before: %.200s\n  Kyverno after:  %.200s", k, s.change.what, before[k], a)
			}
		}
		if n == 0 {
			t.Errorf("%s: %s changes no answer of Kyverno's", s.folder, s.change.what)
		}
	}
}

// followChanges makes every change while tollgate serves, and runs the
// suites' requests until tollgate answers as Kyverno did after them (its
// informers follow the apiserver), for at most ten seconds; it logs how
// long each suite took.
func followChanges(t *testing.T, cfg *rest.Config, cases []policyCase, want map[string]answer) {
	suites := suitesOf(cases)
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(cfg)
	changeAll(t, dyn, false)
	start := time.Now()
	took := map[string]time.Duration{}
	runs := map[string]int{}
	var got map[string]answer
	for n := 1; time.Since(start) < 10*time.Second && len(took) < len(resourceSuites); n++ {
		got = run(t, cfg, cases)
		for _, s := range resourceSuites {
			if _, done := took[s.folder]; !done && agree(suites, s.folder, want, got) {
				took[s.folder], runs[s.folder] = time.Since(start), n
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, s := range resourceSuites {
		if d, ok := took[s.folder]; ok {
			t.Logf("%s: tollgate answers as Kyverno after %q from run %d of the suites' %d requests on, which ended %s after the change",
				s.folder, s.change.what, runs[s.folder], len(want), d.Round(time.Millisecond))
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if suites.of(k) == s.folder && want[k].String() != got[k].String() {
				t.Errorf("%s after %s, 10s on:\n  Kyverno:  %s\n  tollgate: %s", k, s.change.what, want[k], got[k])
			}
		}
	}
}

func agree(suites suiteOf, suite string, want, got map[string]answer) bool {
	for k, w := range want {
		if suites.of(k) == suite && got[k].String() != w.String() {
			return false
		}
	}
	return true
}

// connectSuffix marks the CONNECTs: an exec into a stored Pod.
const connectSuffix = " (CONNECT pods/exec)"

// execPod asks to exec into a Pod. The apiserver calls the webhooks first;
// admitted, it refuses the exec itself, for the Pod has no node.
func execPod(c rest.Interface, ns, pod string) error {
	return c.Post().Namespace(ns).Resource("pods").Name(pod).SubResource("exec").
		Param("command", "ls").Param("stdout", "true").Do(context.Background()).Error()
}

// subset is m on the keys of of.
func subset(m, of map[string]answer) map[string]answer {
	out := map[string]answer{}
	for k := range of {
		out[k] = m[k]
	}
	return out
}

// summarize logs the distinct answers to each policy's requests, with
// how many requests got each.
func summarize(t *testing.T, cases []policyCase, answers map[string]answer) {
	t.Helper()
	suites := suitesOf(cases)
	var names []string
	for _, c := range cases {
		if !slices.Contains(names, c.name) {
			names = append(names, c.name)
		}
	}
	for _, name := range names {
		counts := map[string]int{}
		for k, a := range answers {
			if suites.of(k) == name {
				counts[a.String()]++
			}
		}
		var lines []string
		for _, a := range slices.Sorted(maps.Keys(counts)) {
			lines = append(lines, fmt.Sprintf("  %d× %.220s", counts[a], a))
		}
		t.Logf("%s:\n%s", name, strings.Join(lines, "\n"))
	}
}
