package validatingpolicy_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/admissionpolicy"
	"github.com/tollgate-dev/tollgate/internal/external"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/validatingpolicy"
)

func natives(t *testing.T) map[string]*validatingpolicy.Policy {
	t.Helper()
	set, err := policy.LoadPath(filepath.Join("testdata", "policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*validatingpolicy.Policy{}
	for _, p := range set.Policies {
		if p.VAP == nil {
			t.Fatalf("%s is not a ValidatingAdmissionPolicy", p.Name())
		}
		out[p.Name()] = p.VAP
	}
	return out
}

// review reads a captured AdmissionReview, lets edit change its request
// (as decoded JSON), and decodes it as the server does.
func review(t *testing.T, file string, edit func(req map[string]any)) *admission.Request {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		var r map[string]any
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		edit(r["request"].(map[string]any))
		if body, err = json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	}
	rev, err := admission.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	return &rev.Request
}

func obj(req map[string]any, key string) map[string]any { return req[key].(map[string]any) }

func labelsOf(o map[string]any) map[string]any {
	return o["metadata"].(map[string]any)["labels"].(map[string]any)
}

func container(o map[string]any, i int) map[string]any {
	return o["spec"].(map[string]any)["containers"].([]any)[i].(map[string]any)
}

// asDeployment turns the captured Pod review into one for a Deployment of
// that Pod with the given replicas.
func asDeployment(replicas int) func(req map[string]any) {
	return func(r map[string]any) {
		pod := obj(r, "object")
		meta := pod["metadata"].(map[string]any)
		r["kind"] = map[string]any{"group": "apps", "version": "v1", "kind": "Deployment"}
		r["resource"] = map[string]any{"group": "apps", "version": "v1", "resource": "deployments"}
		r["requestKind"], r["requestResource"] = r["kind"], r["resource"]
		r["name"] = "checkout"
		r["object"] = map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "checkout", "namespace": meta["namespace"]},
			"spec": map[string]any{
				"replicas": replicas,
				"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "checkout"}},
				"template": map[string]any{"metadata": map[string]any{"labels": meta["labels"]}, "spec": pod["spec"]},
			},
		}
	}
}

func knownNamespaces(labels map[string]map[string]string) namespaces.Func {
	if labels == nil {
		return nil // no namespace source at all: selectors are the apiserver's
	}
	return func(name string) (*corev1.Namespace, bool) {
		l, ok := labels[name]
		if !ok {
			return nil, false
		}
		return namespaces.Of(name, l), true
	}
}

// evaluates checks what validatingpolicy.Evaluate makes of req, knowing the given namespaces.
// Which bindings decided is checked where bindings says so (TestApplies,
// whose policy has several); elsewhere it is left out.
func evaluates(t *testing.T, n *validatingpolicy.Policy, req *admission.Request, ns map[string]map[string]string, want validatingpolicy.Decision, bindings bool) {
	t.Helper()
	got, err := validatingpolicy.Evaluate(context.Background(), n, admissionpolicy.NewReview(req), knownNamespaces(ns), external.Sources{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !bindings {
		got.Bindings = nil
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("got  %s\nwant %s", g, w)
	}
}

func TestEvaluate(t *testing.T) {
	enforced := map[string]map[string]string{"shop": {"tollgate.dev/enforce": "true"}}
	for _, tc := range []struct {
		name       string
		policy     string
		file       string
		edit       func(req map[string]any)
		namespaces map[string]map[string]string
		want       validatingpolicy.Decision
	}{
		// pod-images
		{name: "compliant pod", policy: "pod-images", file: "review-pod-create.json", namespaces: enforced,
			want: validatingpolicy.Decision{Matched: true}},
		{name: "latest tag: messageExpression, no reason: Invalid, 422", policy: "pod-images", file: "review-pod-create.json", namespaces: enforced,
			edit: func(r map[string]any) {
				container(obj(r, "object"), 1)["image"] = "registry.example.com/infra/fluent-bit:latest"
			},
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'pod-images' with binding 'pod-images-enforce' denied request: image registry.example.com/infra/fluent-bit:latest uses the latest tag",
				Failures: []string{"image registry.example.com/infra/fluent-bit:latest uses the latest tag"}}},
		{name: "two failures: the first denies, both are listed", policy: "pod-images", file: "review-pod-create.json", namespaces: enforced,
			edit: func(r map[string]any) { container(obj(r, "object"), 0)["image"] = "docker.io/library/nginx:latest" },
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'pod-images' with binding 'pod-images-enforce' denied request: image docker.io/library/nginx:latest uses the latest tag",
				Failures: []string{"image docker.io/library/nginx:latest uses the latest tag", "images must come from registry.example.com"}}},
		{name: "message and reason Forbidden: 403", policy: "pod-images", file: "review-pod-create.json", namespaces: enforced,
			edit: func(r map[string]any) { container(obj(r, "object"), 0)["image"] = "docker.io/library/nginx:1.27" },
			want: validatingpolicy.Decision{Matched: true, Reason: "Forbidden", Code: 403,
				Denial:   "ValidatingAdmissionPolicy 'pod-images' with binding 'pod-images-enforce' denied request: images must come from registry.example.com",
				Failures: []string{"images must come from registry.example.com"}}},
		{name: "matchConditions exclude the pod", policy: "pod-images", file: "review-pod-create.json", namespaces: enforced,
			edit: func(r map[string]any) {
				o := obj(r, "object")
				container(o, 0)["image"] = "docker.io/library/nginx:1.27"
				labelsOf(o)["exempt"] = "yes"
			},
			want: validatingpolicy.Decision{Matched: true, NotApplied: "match conditions not met: not-exempt"}},
		{name: "namespaceSelector does not select the namespace", policy: "pod-images", file: "review-pod-create.json",
			namespaces: map[string]map[string]string{"shop": {"tollgate.dev/enforce": "false"}},
			edit:       func(r map[string]any) { container(obj(r, "object"), 0)["image"] = "docker.io/library/nginx:1.27" },
			want:       validatingpolicy.Decision{Matched: true, NotApplied: "binding pod-images-enforce does not select namespace shop"}},
		// Namespaces tollgate does not know: never "does not apply".
		{name: "no namespaces: a binding selecting by label is undecided, Fail denies", policy: "pod-images", file: "review-pod-create.json",
			edit: func(r map[string]any) { container(obj(r, "object"), 0)["image"] = "docker.io/library/nginx:1.27" },
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial: `ValidatingAdmissionPolicy 'pod-images' with binding 'pod-images-enforce' denied request: namespace "shop" labels unknown: run with --kubeconfig or give the Namespace object`}},
		{name: "namespaces known, not this one: undecided too", policy: "pod-images", file: "review-pod-create.json",
			namespaces: map[string]map[string]string{"other": {"tollgate.dev/enforce": "true"}},
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial: `ValidatingAdmissionPolicy 'pod-images' with binding 'pod-images-enforce' denied request: namespace "shop" labels unknown: run with --kubeconfig or give the Namespace object`}},
		{name: "no namespaces: unknown labels do not matter when the object is not selected", policy: "pod-images", file: "review-pod-delete.json",
			want: validatingpolicy.Decision{NotApplied: "does not match the request"}},
		{name: "no namespaces: a selector on kubernetes.io/metadata.name is decided", policy: "frozen", file: "review-pod-create.json",
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'frozen' with binding 'frozen' denied request: pods are frozen here",
				Failures: []string{"pods are frozen here"}}},
		{name: "no namespaces: kubernetes.io/metadata.name not selected", policy: "frozen", file: "review-pod-create.json",
			edit: func(r map[string]any) { r["namespace"] = "other" },
			want: validatingpolicy.Decision{Matched: true, NotApplied: "binding frozen does not select namespace other"}},
		{name: "no namespaces: the policy's selector by label is undecided, Ignore admits and says so", policy: "gold-only", file: "review-pod-create.json",
			want: validatingpolicy.Decision{Undecided: []string{`namespace "shop" labels unknown: run with --kubeconfig or give the Namespace object`}}},
		{name: "the policy's selector selects", policy: "gold-only", file: "review-pod-create.json",
			namespaces: map[string]map[string]string{"shop": {"tier": "gold"}},
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'gold-only' with binding 'gold-only' denied request: gold namespaces take no pods",
				Failures: []string{"gold namespaces take no pods"}}},
		{name: "the policy's selector does not select", policy: "gold-only", file: "review-pod-create.json",
			namespaces: map[string]map[string]string{"shop": {"tier": "silver"}},
			want:       validatingpolicy.Decision{NotApplied: "the policy does not select namespace shop"}},
		{name: "namespaceObject of an unknown namespace: Ignore admits and says so", policy: "namespace-tier", file: "review-pod-create.json",
			want: validatingpolicy.Decision{Matched: true, Undecided: []string{`namespaceObject: namespace "shop" unknown: run with --kubeconfig or give the Namespace object`}}},
		{name: "namespaceObject of a known namespace", policy: "namespace-tier", file: "review-pod-create.json",
			namespaces: map[string]map[string]string{"shop": {"tier": "gold"}},
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'namespace-tier' with binding 'namespace-tier' denied request: pods may not run in tier gold",
				Failures: []string{"pods may not run in tier gold"}}},
		{name: "a policy without namespaceObject needs no namespace", policy: "replica-limit", file: "review-pod-create.json",
			edit: asDeployment(10),
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: failed expression: object.spec.replicas <= 5",
				Failures: []string{"failed expression: object.spec.replicas <= 5"}}},
		{name: "UPDATE matches too", policy: "pod-images", file: "review-pod-update.json", namespaces: enforced,
			edit: func(r map[string]any) { container(obj(r, "object"), 0)["image"] = "docker.io/library/nginx:1.27" },
			want: validatingpolicy.Decision{Matched: true, Reason: "Forbidden", Code: 403,
				Denial:   "ValidatingAdmissionPolicy 'pod-images' with binding 'pod-images-enforce' denied request: images must come from registry.example.com",
				Failures: []string{"images must come from registry.example.com"}}},
		{name: "DELETE does not match", policy: "pod-images", file: "review-pod-delete.json", namespaces: enforced,
			want: validatingpolicy.Decision{NotApplied: "does not match the request"}},

		// team-label: Warn and Audit
		{name: "warn and audit, no denial", policy: "team-label", file: "review-pod-create.json",
			want: validatingpolicy.Decision{Matched: true,
				Warnings: []string{"Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label-observe': team payments may not run pods here"},
				AuditAnnotations: map[string]string{
					"team-label/team": "payments",
					"validation.policy.admission.k8s.io/validation_failure": `[{"message":"team payments may not run pods here","policy":"team-label","binding":"team-label-observe","expressionIndex":0,"validationActions":["Warn","Audit"]}]`,
				},
				Failures: []string{"team payments may not run pods here"}}},
		{name: "warn and audit: passing", policy: "team-label", file: "review-pod-create.json",
			edit: func(r map[string]any) { labelsOf(obj(r, "object"))["team"] = "platform" },
			want: validatingpolicy.Decision{Matched: true, AuditAnnotations: map[string]string{"team-label/team": "platform"}}},

		// replica-limit
		{name: "a Pod does not match a Deployment policy", policy: "replica-limit", file: "review-pod-create.json",
			want: validatingpolicy.Decision{NotApplied: "does not match the request"}},

		{name: "a Deployment over the limit: no message, the apiserver's default", policy: "replica-limit", file: "review-pod-create.json",
			edit: asDeployment(10),
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: failed expression: object.spec.replicas <= 5",
				Failures: []string{"failed expression: object.spec.replicas <= 5"}}},
		{name: "a Deployment within the limit", policy: "replica-limit", file: "review-pod-create.json",
			edit: asDeployment(3), want: validatingpolicy.Decision{Matched: true}},

		// an expression that errs
		{name: "runtime error under failurePolicy Fail denies", policy: "node-pinned-fail", file: "review-pod-create.json",
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'node-pinned-fail' with binding 'node-pinned-fail' denied request: expression 'object.spec.nodeName != 'forbidden-node'' resulted in error: no such key: nodeName",
				Failures: []string{"expression 'object.spec.nodeName != 'forbidden-node'' resulted in error: no such key: nodeName"}}},
		{name: "runtime error under failurePolicy Ignore admits, and says it was not evaluated", policy: "node-pinned-ignore", file: "review-pod-create.json",
			want: validatingpolicy.Decision{Matched: true, Ignored: []string{"expression 'object.spec.nodeName != 'forbidden-node'' resulted in error: no such key: nodeName"}}},

		// DELETE: oldObject, userInfo, namespaceObject
		{name: "delete in prod denied, and audited", policy: "no-deletes-in-prod", file: "review-pod-delete.json", namespaces: enforced,
			want: validatingpolicy.Decision{Matched: true, Reason: "Forbidden", Code: 403,
				Denial: "ValidatingAdmissionPolicy 'no-deletes-in-prod' with binding 'no-deletes-in-prod' denied request: user admin may not delete checkout-7d9f8c6b5-x2k4q in namespace shop",
				AuditAnnotations: map[string]string{
					"validation.policy.admission.k8s.io/validation_failure": `[{"message":"user admin may not delete checkout-7d9f8c6b5-x2k4q in namespace shop","policy":"no-deletes-in-prod","binding":"no-deletes-in-prod","expressionIndex":0,"validationActions":["Deny","Audit"]}]`,
				},
				Failures: []string{"user admin may not delete checkout-7d9f8c6b5-x2k4q in namespace shop"}}},
		// Without the namespace, namespaceObject would be null and the
		// messageExpression would err where the apiserver's succeeds: the
		// policy (failurePolicy Fail) denies, naming what it lacks.
		{name: "namespaceObject of a namespace tollgate does not know", policy: "no-deletes-in-prod", file: "review-pod-delete.json",
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial: `ValidatingAdmissionPolicy 'no-deletes-in-prod' with binding 'no-deletes-in-prod' denied request: namespaceObject: namespace "shop" unknown: run with --kubeconfig or give the Namespace object`}},
		{name: "delete by ci allowed", policy: "no-deletes-in-prod", file: "review-pod-delete.json", namespaces: enforced,
			edit: func(r map[string]any) { obj(r, "userInfo")["username"] = "ci" },
			want: validatingpolicy.Decision{Matched: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := natives(t)[tc.policy]
			if n == nil {
				t.Fatalf("no policy %s", tc.policy)
			}
			evaluates(t, n, review(t, tc.file, tc.edit), tc.namespaces, tc.want, false)
		})
	}
}

// TestEvaluateFromWebhook: on a binding's webhook path the apiserver has
// applied the policy's and the binding's selectors, so the policy is
// decided without knowing namespaces; namespaceObject still needs one.
func TestEvaluateFromWebhook(t *testing.T) {
	set, err := policy.LoadPath(filepath.Join("testdata", "policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]*validatingpolicy.Policy{}
	for _, g := range set.Groups {
		for _, w := range g.BindingWebhooks {
			for _, p := range w.Group.Policies { // a shared entry serves several policies
				served[p.Name()+"/"+p.VAP.Bindings[0].Name] = p.VAP
			}
		}
	}
	for _, tc := range []struct {
		name, path, file string
		edit             func(req map[string]any)
		namespaces       map[string]map[string]string
		want             validatingpolicy.Decision
	}{
		{name: "binding selector by label, no namespaces", path: "pod-images/pod-images-enforce", file: "review-pod-create.json",
			edit: func(r map[string]any) { container(obj(r, "object"), 0)["image"] = "docker.io/library/nginx:1.27" },
			want: validatingpolicy.Decision{Matched: true, Reason: "Forbidden", Code: 403,
				Denial:   "ValidatingAdmissionPolicy 'pod-images' with binding 'pod-images-enforce' denied request: images must come from registry.example.com",
				Failures: []string{"images must come from registry.example.com"}}},
		{name: "the apiserver's selection is trusted over stale namespace labels", path: "pod-images/pod-images-enforce", file: "review-pod-create.json",
			namespaces: map[string]map[string]string{"shop": {"tollgate.dev/enforce": "false"}},
			edit:       func(r map[string]any) { container(obj(r, "object"), 0)["image"] = "docker.io/library/nginx:1.27" },
			want: validatingpolicy.Decision{Matched: true, Reason: "Forbidden", Code: 403,
				Denial:   "ValidatingAdmissionPolicy 'pod-images' with binding 'pod-images-enforce' denied request: images must come from registry.example.com",
				Failures: []string{"images must come from registry.example.com"}}},
		{name: "policy selector by label, no namespaces", path: "gold-only/gold-only", file: "review-pod-create.json",
			want: validatingpolicy.Decision{Matched: true, Reason: "Invalid", Code: 422,
				Denial:   "ValidatingAdmissionPolicy 'gold-only' with binding 'gold-only' denied request: gold namespaces take no pods",
				Failures: []string{"gold namespaces take no pods"}}},
		{name: "rules are still the server's", path: "pod-images/pod-images-enforce", file: "review-pod-delete.json",
			want: validatingpolicy.Decision{NotApplied: "does not match the request"}},
		{name: "namespaceObject still needs the namespace", path: "namespace-tier/namespace-tier", file: "review-pod-create.json",
			want: validatingpolicy.Decision{Matched: true, Undecided: []string{`namespaceObject: namespace "shop" unknown: run with --kubeconfig or give the Namespace object`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := served[tc.path]
			if n == nil {
				t.Fatalf("no webhook path %s", tc.path)
			}
			evaluates(t, n, review(t, tc.file, tc.edit), tc.namespaces, tc.want, false)
		})
	}
}
