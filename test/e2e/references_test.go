//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// refCluster is the admin's dynamic client and a mapper for the tests of
// the reference policies.
type refCluster struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newRefCluster(t *testing.T) refCluster {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cluster.restConfig)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cluster.restConfig)
	if err != nil {
		t.Fatal(err)
	}
	return refCluster{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
}

func (rc refCluster) resource(t *testing.T, u *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	gvk := u.GroupVersionKind()
	m, err := rc.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("%s: %v", gvk, err)
	}
	return rc.dyn.Resource(m.Resource).Namespace(u.GetNamespace())
}

// store creates an object (as the admin, past any webhook that allows it)
// and deletes it when the test ends.
func (rc refCluster) store(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	r := rc.resource(t, u)
	if _, err := r.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("store %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	t.Cleanup(func() { _ = r.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
}

// review sends an object as a CREATE with a server-side dry run, so that
// every admission webhook decides it and nothing is stored: the denial's
// message, or "" when admitted. An object already stored is admitted when
// the apiserver answers AlreadyExists, which it does only after the
// validating webhooks. Pods get environment=dev, which the e2e suite's own
// tollgate requires of every Pod.
func (rc refCluster) review(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	u = u.DeepCopy()
	if u.GetKind() == "Pod" {
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["environment"] = "dev"
		u.SetLabels(labels)
	}
	_, err := rc.resource(t, u).Create(context.Background(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return ""
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return err.Error()
	}
	t.Fatalf("review %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	return ""
}

// readYAML decodes every document of a file.
func readYAML(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	return out
}

// referencePolicies are policies/references/*.yaml, joined as one file,
// and the kinds their spec.references declare.
func referencePolicies(t *testing.T) ([]byte, map[schema.GroupVersionKind]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "policies", "references", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("policies/references: %v", err)
	}
	var docs bytes.Buffer
	declared := map[schema.GroupVersionKind]bool{}
	for _, f := range files {
		for _, p := range readYAML(t, f) {
			refs, _, _ := unstructured.NestedSlice(p.Object, "spec", "references")
			for _, r := range refs {
				m := r.(map[string]any)
				gv, err := schema.ParseGroupVersion(m["apiVersion"].(string))
				if err != nil {
					t.Fatal(err)
				}
				declared[gv.WithKind(m["kind"].(string))] = true
			}
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs.WriteString("---\n")
		docs.Write(data)
	}
	return docs.Bytes(), declared
}

// referenceSuite is policies/tests/references.tollgate-test.yaml's
// expectations and resources (by namespace/name).
func referenceSuite(t *testing.T) ([]refExpectation, map[string]*unstructured.Unstructured) {
	t.Helper()
	dir := filepath.Join(framework.RepoRoot(), "policies", "tests")
	data, err := os.ReadFile(filepath.Join(dir, "references.tollgate-test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Resources []string         `json:"resources"`
		Results   []refExpectation `json:"results"`
	}
	if err := yaml.Unmarshal(data, &suite); err != nil {
		t.Fatal(err)
	}
	objs := map[string]*unstructured.Unstructured{}
	for _, f := range suite.Resources {
		for _, u := range readYAML(t, filepath.Join(dir, f)) {
			objs[u.GetNamespace()+"/"+u.GetName()] = u
		}
	}
	return suite.Results, objs
}

type refExpectation struct {
	Policy    string   `json:"policy"`
	Resources []string `json:"resources"`
	Result    string   `json:"result"`
}

// TestReferencePoliciesInCluster serves the library's reference policies
// (policies/references) with cluster access, the objects they reference
// really stored, and reviews every resource of their suite through the
// apiserver: each is denied or admitted as the suite says. Then a stored
// object is deleted, and another added, and the verdicts that read them
// follow.
func TestReferencePoliciesInCluster(t *testing.T) {
	rc := newRefCluster(t)
	docs, declared := referencePolicies(t)
	expectations, objs := referenceSuite(t)
	for _, ns := range []string{"shop", "edge"} {
		namespace(t, ns, nil)
	}
	stored := 0
	for _, u := range objs {
		if declared[u.GroupVersionKind()] {
			rc.store(t, u)
			stored++
		}
	}
	duplicate := objs["edge/storefront-copy"]
	startTollgateWith(t, "references", func(context.Context) error {
		if rc.review(t, duplicate) != "" {
			return errors.New("still denied")
		}
		return nil
	}, docs)
	framework.WaitFor(t, 30*time.Second, "the reference policies in effect", func() bool {
		return strings.Contains(rc.review(t, duplicate), "unique-ingress-host")
	})

	reviewed := 0
	for _, e := range expectations {
		for _, key := range e.Resources {
			u, ok := objs[key]
			if !ok {
				t.Fatalf("%s: the suite names no such resource", key)
			}
			msg := rc.review(t, u)
			reviewed++
			byPolicy := strings.Contains(msg, e.Policy)
			switch {
			case e.Result == "fail" && !byPolicy && isServiceAccountPlugin(msg):
				// The apiserver's ServiceAccount plugin denies a Pod whose
				// ServiceAccount does not exist before any webhook is called.
				t.Logf("%s %s: denied by the apiserver's ServiceAccount admission plugin first: %s", e.Policy, key, msg)
			case e.Result == "fail" && !byPolicy:
				t.Errorf("%s %s: want denied by it, got %q", e.Policy, key, msg)
			case e.Result != "fail" && byPolicy:
				t.Errorf("%s %s: want %s, got denied: %s", e.Policy, key, e.Result, msg)
			}
		}
	}
	t.Logf("%d objects stored, %d suite resources reviewed through the apiserver", stored, reviewed)

	// A stored object deleted: the duplicate it made is admitted now.
	storefront := objs["shop/storefront"]
	if err := rc.resource(t, storefront).Delete(context.Background(), storefront.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	took := framework.WaitFor(t, 30*time.Second, "edge/storefront-copy admitted once shop/storefront is deleted", func() bool {
		return rc.review(t, duplicate) == ""
	})
	t.Logf("shop/storefront deleted: edge/storefront-copy admitted %s later", took.Round(time.Millisecond))
	// A Deployment deleted: the HorizontalPodAutoscaler targeting it is denied now.
	hpa, web := objs["shop/web-hpa"], objs["shop/web"]
	if msg := rc.review(t, hpa); msg != "" {
		t.Fatalf("shop/web-hpa denied before its target is deleted: %s", msg)
	}
	if err := rc.resource(t, web).Delete(context.Background(), web.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	took = framework.WaitFor(t, 30*time.Second, "shop/web-hpa denied once shop/web is deleted", func() bool {
		return strings.Contains(rc.review(t, hpa), "hpa-target-exists")
	})
	t.Logf("shop/web deleted: shop/web-hpa denied %s later", took.Round(time.Millisecond))
}

func isServiceAccountPlugin(msg string) bool {
	return strings.Contains(msg, "service account") && strings.Contains(msg, "not found")
}
