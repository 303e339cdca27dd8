//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestMAPDifferential applies the same MutatingAdmissionPolicies natively
// (bound to namespace map-native) and through tollgate (bound to
// map-tollgate), creates the same corpus in both namespaces, and requires
// the stored objects to be equal field by field (apart from names and
// server-set metadata). Then it creates Pods for real and updates them:
// tollgate's injection and the policies, reinvoked by the apiserver's
// rules, must neither undo nor repeat each other. Both namespaces are
// labeled for tollgate's own sidecar injection, so Pods are mutated by both
// tollgate's injection and the policies.
func TestMAPDifferential(t *testing.T) {
	template := mapPolicies(t)
	sides := mapSides{native: "map-native", tollgate: "map-tollgate", params: true}
	ensureNamespaces(t, map[string]map[string]string{
		sides.native:   {"mapdiff": "native", "sidecar-injection": "enabled"},
		sides.tollgate: {"mapdiff": "tollgate", "sidecar-injection": "enabled"},
	})
	createMAPParams(t)
	applyNative(t, bytes.ReplaceAll(template, []byte("PLACEHOLDER"), []byte("native")))
	// The configuration's name sorts before tollgate's own ("tollgate"): the
	// apiserver calls webhook configurations in name order, and runs its own
	// policies before every webhook.
	startTollgateWith(t, "map-tollgate", mapGone(sides.tollgate), bytes.ReplaceAll(template, []byte("PLACEHOLDER"), []byte("tollgate")))
	sides.wait(t)
	sides.compare(t, "9 policies (2 with params, 1 with two bindings)")
	sides.stable(t)
}

// mapPolicies are testdata/map-policies.yaml, once the apiserver is known
// to serve MutatingAdmissionPolicies.
func mapPolicies(t *testing.T) []byte {
	t.Helper()
	requireMAPServed(t)
	template, err := os.ReadFile("testdata/map-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return template
}

// ensureNamespaces makes each namespace with its labels.
func ensureNamespaces(t *testing.T, labels map[string]map[string]string) {
	t.Helper()
	for ns, l := range labels {
		if err := framework.EnsureNamespace(context.Background(), cluster.client, ns, l); err != nil {
			t.Fatal(err)
		}
	}
}

// mapSides are two namespaces the same policies are bound to: by the
// apiserver in native, through tollgate in tollgate. params: the policies
// with params are among them.
type mapSides struct {
	native, tollgate string
	params           bool
}

// compare creates the corpus in both namespaces (as a dry run) and
// requires the stored objects to be equal, each bearing its policies' mark.
func (s mapSides) compare(t *testing.T, policies string) {
	t.Helper()
	ctx := context.Background()
	corpus := mapCorpus()
	changed, differ := 0, 0
	for _, obj := range corpus {
		name := obj.(metav1.Object).GetName()
		native, err := createObject(ctx, s.native, obj, true)
		if err != nil {
			t.Errorf("%s: native: %v", name, err)
			continue
		}
		tollgate, err := createObject(ctx, s.tollgate, obj, true)
		if err != nil {
			t.Errorf("%s: tollgate: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(normalized(native), normalized(tollgate)) {
			differ++
			n, _ := json.MarshalIndent(normalized(native), "", " ")
			g, _ := json.MarshalIndent(normalized(tollgate), "", " ")
			t.Errorf("%s: stored objects differ\nnative:   %s\ntollgate: %s", name, n, g)
		}
		if mutatedByPolicies(native, s.params) {
			changed++
		}
	}
	t.Logf("MAP differential in %s: %s, %d objects (12 Pods, 8 Deployments, 6 ConfigMaps, 5 Services), %d mutated by the policies, %d stored differently",
		s.tollgate, policies, len(corpus), changed, differ)
	if changed != len(corpus) {
		t.Errorf("only %d of %d objects bear their policy's mark: the policies did not apply", changed, len(corpus))
	}
}

// stable stores Pods for real in both namespaces, then updates them: each
// side stable under reinvocation, and both alike.
func (s mapSides) stable(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, p := range []*corev1.Pod{
		mapPod("stable-1", nil, nil),
		mapPod("stable-2", map[string]string{"team": "a"}, map[string]string{"note": "kept"}, corev1.Container{Name: "proxy", Image: "registry.example.com/proxy:1"}),
		mapPod("stable-3", map[string]string{"no-proxy": "yes"}, nil, corev1.Container{Name: "worker", Image: "registry.example.com/worker:1"}),
	} {
		stored := map[string]*corev1.Pod{}
		for _, ns := range []string{s.native, s.tollgate} {
			got := createPod(t, ns, p.DeepCopy())
			checkStable(t, ns, got)
			got.Labels["updated"] = "yes"
			updated, err := cluster.client.CoreV1().Pods(ns).Update(ctx, got, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("%s/%s: update: %v", ns, p.Name, err)
			}
			checkStable(t, ns, updated)
			stored[ns] = updated
		}
		n, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(stored[s.native])
		g, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(stored[s.tollgate])
		if !reflect.DeepEqual(normalized(n), normalized(g)) {
			nj, _ := json.Marshal(normalized(n))
			gj, _ := json.Marshal(normalized(g))
			t.Errorf("%s: stored Pods differ\nnative:   %s\ntollgate: %s", p.Name, nj, gj)
		}
	}
}

// createMAPParams creates the params of the parameterized policies before
// any policy is in force: map-region in each test namespace (a different
// region each: the stored objects are compared with it replaced), and two
// defaults in map-params, with one that no selector matches.
func createMAPParams(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := framework.EnsureNamespace(ctx, cluster.client, "map-params", nil); err != nil {
		t.Fatal(err)
	}
	cms := []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "map-native", Name: "map-region"}, Data: map[string]string{"region": "eu-west"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "map-tollgate", Name: "map-region"}, Data: map[string]string{"region": "eu-west"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "map-params", Name: "default-owner", Labels: map[string]string{"mapdiff-default": "yes"}},
			Data: map[string]string{"key": "example.com/owner", "value": "platform"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "map-params", Name: "default-tier", Labels: map[string]string{"mapdiff-default": "yes"}},
			Data: map[string]string{"key": "tier", "value": "standard"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "map-params", Name: "not-a-default"}, Data: map[string]string{"key": "never", "value": "set"}},
	}
	for _, cm := range cms {
		if _, err := cluster.client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// checkStable requires one of each thing added (tollgate's sidecar, the
// policy's proxy unless opted out, the toleration) and the container count
// of the reinvoked policy to be that of the final Pod.
func checkStable(t *testing.T, ns string, p *corev1.Pod) {
	t.Helper()
	names := containerNames(p.Spec.Containers)
	wantProxy := 1
	if p.Labels["no-proxy"] != "" {
		wantProxy = 0
	}
	if count(names, func(n string) bool { return n == "sidecar-nginx" }) != 1 || count(names, func(n string) bool { return n == "proxy" }) != wantProxy {
		t.Errorf("%s/%s: containers %v, want sidecar-nginx once and proxy %d times", ns, p.Name, names, wantProxy)
	}
	if got := p.Annotations["example.com/containers"]; got != strconv.Itoa(len(names)) {
		t.Errorf("%s/%s: example.com/containers = %q, want %d (the reinvoked policy saw an older Pod)", ns, p.Name, got, len(names))
	}
	if n := count(p.Spec.Tolerations, func(tl corev1.Toleration) bool { return tl.Key == "dedicated" }); n != 1 {
		t.Errorf("%s/%s: %d dedicated tolerations, want 1", ns, p.Name, n)
	}
	if p.Annotations["tollgate.dev/status"] != "nginx-sidecar" || p.Annotations["example.com/tolerated"] != "true" {
		t.Errorf("%s/%s: annotations %v", ns, p.Name, p.Annotations)
	}
}

// requireMAPServed fails unless the apiserver serves
// admissionregistration.k8s.io/v1 MutatingAdmissionPolicies.
func requireMAPServed(t *testing.T) {
	t.Helper()
	list, err := cluster.client.Discovery().ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, r := range list.APIResources {
		served = append(served, r.Name)
	}
	if !slices.Contains(served, "mutatingadmissionpolicies") || !slices.Contains(served, "mutatingadmissionpolicybindings") {
		t.Fatalf("the apiserver does not serve MutatingAdmissionPolicy v1: %v", served)
	}
}

// wait waits until every policy is in effect on both sides: the apiserver
// loads policies asynchronously, and the Ignore one is skipped until then.
func (s mapSides) wait(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	probes := []runtime.Object{mapPod("probe", nil, nil), mapDeployment("probe", 1, map[string]string{"tier": "frontend"}),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: map[string]string{"team": "probe"}}}, mapService("probe", nil)}
	ok := func(ns string) error {
		for _, probe := range probes {
			got, err := createObject(ctx, ns, probe, true)
			if err != nil {
				return err
			}
			js, _ := json.Marshal(got)
			for _, want := range []string{`"proxy"`, `"example.com/containers"`, `"replicas":3`, `"managed-by":"mapdiff"`, `"mesh":"on"`, `"example.com/bound":"yes"`,
				`"example.com/region":"eu-west"`, `"tier":"standard"`, `"example.com/owner":"platform"`} {
				if kindHas(got, want, s.params) && !bytes.Contains(js, []byte(want)) {
					return fmt.Errorf("%s: %s not yet in %s", ns, want, js)
				}
			}
		}
		return nil
	}
	var err error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if err = ok(s.native); err == nil {
			if err = ok(s.tollgate); err == nil {
				return
			}
		}
	}
	t.Fatalf("policies not in effect: %v", err)
}

// mutatedByPolicies tells whether a stored object bears the mark of the
// policy that always changes its kind (params: of the policies with params
// too).
func mutatedByPolicies(obj map[string]any, params bool) bool {
	meta, _ := obj["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	switch obj["kind"] {
	case "Pod":
		return annotations["example.com/containers"] != nil
	case "Service":
		return annotations["mesh"] == "on" && labels["never"] == nil &&
			(!params || labels["tier"] == "standard" && labels["example.com/owner"] == "platform")
	case "Deployment":
		return labels["managed-by"] == "mapdiff" && (!params || annotations["example.com/region"] == "eu-west")
	default:
		return labels["managed-by"] == "mapdiff"
	}
}

// kindHas tells whether a probe of got's kind must show want (params: the
// marks of the policies with params too).
func kindHas(got map[string]any, want string, params bool) bool {
	if !params && (want == `"example.com/region":"eu-west"` || want == `"tier":"standard"` || want == `"example.com/owner":"platform"`) {
		return false
	}
	switch got["kind"] {
	case "Pod":
		return want == `"proxy"` || want == `"example.com/containers"`
	case "Deployment":
		return want == `"replicas":3` || want == `"managed-by":"mapdiff"` || want == `"example.com/region":"eu-west"`
	case "ConfigMap":
		return want == `"managed-by":"mapdiff"` || want == `"example.com/bound":"yes"`
	case "Service":
		return want == `"mesh":"on"` || want == `"tier":"standard"` || want == `"example.com/owner":"platform"`
	}
	return false
}

// mapGone succeeds once the apiserver no longer calls the tollgate bound
// to ns.
func mapGone(ns string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := cluster.client.CoreV1().Services(ns).Create(ctx, mapService("gone", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
}
