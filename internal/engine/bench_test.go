package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/benchpolicies"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// capturedPod is the Pod CREATE review captured from kube-apiserver.
func capturedPod(tb testing.TB) *admission.Request {
	tb.Helper()
	body, err := os.ReadFile("../admission/testdata/review-pod-create.json")
	if err != nil {
		tb.Fatal(err)
	}
	review, err := admission.Decode(body)
	if err != nil {
		tb.Fatal(err)
	}
	return &review.Request
}

// capturedDeployment is a Deployment CREATE review whose Pod template is
// the captured Pod's labels, annotations and spec, as hack/bench's
// Deployment row.
func capturedDeployment(tb testing.TB) *admission.Request {
	tb.Helper()
	req := capturedPod(tb)
	var pod map[string]any
	if err := json.Unmarshal(req.Object(), &pod); err != nil {
		tb.Fatal(err)
	}
	meta := pod["metadata"].(map[string]any)
	dep, err := json.Marshal(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "checkout", "namespace": meta["namespace"], "labels": meta["labels"]},
		"spec": map[string]any{
			"replicas": 3,
			"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "checkout"}},
			"template": map[string]any{"metadata": map[string]any{"labels": meta["labels"], "annotations": meta["annotations"]}, "spec": pod["spec"]},
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	req.Kind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	req.Resource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	req.Name = "checkout"
	req.SetObjects(dep, nil)
	return req
}

// benchGroup reviews the captured Pod against the set's one group.
func benchGroup(b *testing.B, set *policy.Set, err error) {
	benchRequest(b, set, err, capturedPod(b))
}

// benchRequest reviews req against the set's one group.
func benchRequest(b *testing.B, set *policy.Set, err error, req *admission.Request) {
	if err != nil {
		b.Fatal(err)
	}
	g := set.Groups[0]
	e := New(set, Options{})
	for b.Loop() {
		e.Review(context.Background(), g, req)
	}
	b.ReportMetric(float64(len(g.Policies)), "policies")
}

// BenchmarkLibraryPod evaluates the captured Pod review against the
// library's Pod group: the Pod Security restricted set and the rest of the
// library's Pod policies (benchpolicies.LibraryPods).
func BenchmarkLibraryPod(b *testing.B) {
	set, err := benchpolicies.LibraryPods("../..")
	benchGroup(b, set, err)
}

// BenchmarkKyvernoPodSecurity decides the captured Pod as the apiserver
// would have it decided with Kyverno's Pod Security set installed as
// ValidatingPolicies (benchpolicies.KyvernoPodSecurity): an operation is
// every webhook call the apiserver makes for the Pod (webhookGroups; one
// since the 16 share a webhook, 16 before). Beside it,
// BenchmarkPodSecuritySet is tollgate's own set of the same profile
// (policies/sets/pod-security-restricted.yaml), one webhook.
func BenchmarkKyvernoPodSecurity(b *testing.B) {
	benchKyvernoPodSecurity(b, capturedPod(b))
}

// BenchmarkKyvernoPodSecurityDeployment is BenchmarkKyvernoPodSecurity on
// a Deployment whose template is the captured Pod (autogen decides it).
func BenchmarkKyvernoPodSecurityDeployment(b *testing.B) {
	benchKyvernoPodSecurity(b, capturedDeployment(b))
}

func benchKyvernoPodSecurity(b *testing.B, req *admission.Request) {
	set, err := benchpolicies.KyvernoPodSecurity("../..")
	if err != nil {
		b.Fatal(err)
	}
	e := New(set, Options{})
	calls := webhookGroups(set)
	for b.Loop() {
		for _, g := range calls {
			if resp := e.Review(context.Background(), g, req); !resp.Allowed {
				b.Fatalf("%s denied the request: %s", g.Path(), resp.Message)
			}
		}
	}
	b.ReportMetric(float64(len(calls)), "calls")
}

// BenchmarkKubescapePod decides the captured Pod against Kubescape's
// published ValidatingAdmissionPolicies that match Pods, each bound in
// every namespace (benchpolicies.KubescapePods): the 37 without params,
// then all 51 with the library's ControlConfiguration as the params of
// 14. An operation is every webhook call the apiserver makes for the
// Pod; some of the policies deny it. fast is as served, tracked with
// --cel-fast-path=false.
func BenchmarkKubescapePod(b *testing.B) {
	benchKubescape(b, capturedPod(b))
}

// BenchmarkKubescapeDeployment is BenchmarkKubescapePod on the Deployment
// whose template is the captured Pod.
func BenchmarkKubescapeDeployment(b *testing.B) {
	benchKubescape(b, capturedDeployment(b))
}

func benchKubescape(b *testing.B, req *admission.Request) {
	for _, params := range []bool{false, true} {
		set, err := benchpolicies.KubescapePods("../..", params)
		if err != nil {
			b.Fatal(err)
		}
		ext, err := benchpolicies.Params(context.Background(), set)
		if err != nil {
			b.Fatal(err)
		}
		calls := webhookGroups(set)
		for _, tracked := range []bool{false, true} {
			name := fmt.Sprintf("%d/%s", len(set.Groups), map[bool]string{false: "fast", true: "tracked"}[tracked])
			b.Run(name, func(b *testing.B) {
				e := New(set, Options{External: ext, NoCELFastPath: tracked})
				for b.Loop() {
					for _, g := range calls {
						e.Review(context.Background(), g, req)
					}
				}
				b.ReportMetric(float64(len(calls)), "calls")
			})
		}
	}
}

// webhookGroups are the groups the apiserver calls, one per webhook entry:
// a ValidatingAdmissionPolicy's are its bindings' entries.
func webhookGroups(set *policy.Set) []*policy.Group {
	var out []*policy.Group
	for _, g := range set.Groups {
		if g.Kind != policy.GroupVAP {
			out = append(out, g)
		}
		for _, w := range g.BindingWebhooks {
			out = append(out, w.Group)
		}
	}
	return out
}

// BenchmarkPodSecuritySet is tollgate's restricted Pod Security set on the
// captured Pod (see BenchmarkKyvernoPodSecurity).
func BenchmarkPodSecuritySet(b *testing.B) {
	set, err := podSecuritySet()
	benchGroup(b, set, err)
}

// BenchmarkPodSecuritySetDeployment is BenchmarkPodSecuritySet on the
// Deployment of BenchmarkKyvernoPodSecurityDeployment.
func BenchmarkPodSecuritySetDeployment(b *testing.B) {
	set, err := podSecuritySet()
	benchRequest(b, set, err, capturedDeployment(b))
}

func podSecuritySet() (*policy.Set, error) {
	set, err := policy.LoadPath("../../policies/sets/pod-security-restricted.yaml")
	if err == nil && len(set.Groups) != 1 {
		err = fmt.Errorf("%d groups, want 1", len(set.Groups))
	}
	return set, err
}

// BenchmarkTwenty is make bench's 20-policy group on the captured Pod.
func BenchmarkTwenty(b *testing.B) {
	set, err := benchpolicies.Twenty("../..")
	benchGroup(b, set, err)
}

// BenchmarkTwentyDeployment is make bench's 20-policy group on a
// Deployment whose template is the captured Pod (capturedDeployment): the
// policies check the Pod template.
func BenchmarkTwentyDeployment(b *testing.B) {
	set, err := benchpolicies.Twenty("../..")
	benchRequest(b, set, err, capturedDeployment(b))
}

// BenchmarkPolicies is the cost of each additional simple CEL policy: 1,
// 10, 50 and 200 field checks on one path, on the captured Pod.
func BenchmarkPolicies(b *testing.B) {
	for _, n := range []int{1, 10, 50, 200} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			set, err := benchpolicies.FieldChecks(n)
			benchGroup(b, set, err)
		})
	}
}

// BenchmarkGatekeeperPodSecurity decides the captured Pod with
// gatekeeper-library's 19 pod-security-policy templates and a sample
// Constraint each (benchpolicies.GatekeeperPodSecurity), through
// Gatekeeper's own evaluator: one webhook, as Gatekeeper has. Compare it
// with BenchmarkPodSecuritySet, tollgate's own restricted set.
func BenchmarkGatekeeperPodSecurity(b *testing.B) {
	set, err := benchpolicies.GatekeeperPodSecurity("../..")
	if err != nil {
		b.Fatal(err)
	}
	if ev := New(set, Options{}).Evaluate(context.Background(), set.Groups[0], capturedPod(b)); len(ev.Results) > 0 && ev.Results[0].Outcome == Error {
		b.Fatalf("%s: %s", ev.Results[0].Policy, ev.Results[0].Message)
	}
	benchGroup(b, set, nil)
}
