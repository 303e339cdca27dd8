package gatekeeper

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDecodeConfigErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"apiVersion":"config.gatekeeper.sh/v1alpha1","kind":"Config","metadata":{"name":"other"}}`, `reads only the Config named "config"`},
		{`{"apiVersion":"config.gatekeeper.sh/v1alpha1","kind":"Config","metadata":{"name":"config"},"spec":{"match":[{"processes":["validation"],"excludedNamespaces":["a"]}]}}`, `"validation" is not a Gatekeeper process`},
		{`{"apiVersion":"config.gatekeeper.sh/v1alpha1","kind":"Config","metadata":{"name":"config"},"spec":{"exempt":["a"]}}`, `exempt`},
		{`{"apiVersion":"config.gatekeeper.sh/v1beta1","kind":"Config","metadata":{"name":"config"}}`, `v1beta1`},
	} {
		if _, err := DecodeConfig([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.doc, err, tc.want)
		}
	}
}

// TestConfigExcludes reviews with a Config as Gatekeeper's process
// excluder reads it: each process its own namespaces, * for all of them,
// wildcards, a Namespace by its own name; gator verify reads no Config.
func TestConfigExcludes(t *testing.T) {
	cfg, err := DecodeConfig([]byte(`{"apiVersion":"config.gatekeeper.sh/v1alpha1","kind":"Config","metadata":{"name":"config","namespace":"gatekeeper-system"},
"spec":{"sync":{"syncOnly":[{"group":"","version":"v1","kind":"Namespace"}]},"match":[
{"processes":["*"],"excludedNamespaces":["kube-*"]},
{"processes":["webhook"],"excludedNamespaces":["hooks-off"]},
{"processes":["audit"],"excludedNamespaces":["audit-off"]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.SyncOnly) != 1 || cfg.SyncOnly[0].Kind != "Namespace" {
		t.Errorf("syncOnly %v", cfg.SyncOnly)
	}
	e := allowedRepos(t, []byte(`{"apiVersion":"constraints.gatekeeper.sh/v1beta1","kind":"K8sAllowedRepos","metadata":{"name":"repos"},"spec":{"parameters":{"repos":["openpolicyagent/"]}}}`))
	e.SetConfig(cfg)
	ctx := context.Background()
	for _, tc := range []struct {
		ns, point string
		violated  bool
	}{
		{"default", Webhook, true},
		{"kube-system", Webhook, false},
		{"kube-system", Audit, false},
		{"hooks-off", Webhook, false},
		{"hooks-off", Audit, true},
		{"audit-off", Webhook, true},
		{"audit-off", Audit, false},
		{"kube-system", Gator, true},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.ns}}
		vs, err := e.ReviewRequest(ctx, podRequest(t, tc.ns, "nginx"), ns, tc.point)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(vs) > 0; got != tc.violated {
			t.Errorf("request in %s at %s: violated %v, want %v", tc.ns, tc.point, got, tc.violated)
		}
		var pod unstructured.Unstructured
		if err := pod.UnmarshalJSON(podRequest(t, tc.ns, "nginx").Object.Raw); err != nil {
			t.Fatal(err)
		}
		vs, err = e.ReviewObject(ctx, &pod, ns, tc.point)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(vs) > 0; got != tc.violated {
			t.Errorf("object in %s at %s: violated %v, want %v", tc.ns, tc.point, got, tc.violated)
		}
	}
	// A Namespace is excluded by its own name, not by its (empty) namespace.
	if !cfg.excluded(Webhook, corev1.SchemeGroupVersion.WithKind("Namespace"), "kube-public", "") {
		t.Error("Namespace kube-public not excluded by kube-*")
	}
	if cfg.excluded(Webhook, corev1.SchemeGroupVersion.WithKind("Namespace"), "team-a", "") {
		t.Error("Namespace team-a excluded")
	}
}
