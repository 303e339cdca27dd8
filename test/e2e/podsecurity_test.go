//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestPodSecurityDifferential puts the library's two Pod Security sets
// beside the kube-apiserver's own Pod Security admission: namespaces
// pss-native-LEVEL enforce LEVEL natively, pss-tollgate-LEVEL get tollgate's
// pod-security-LEVEL set, and every Pod of the corpus is created (dry run)
// in both. The decision must be the same, and each refusal must come from
// its own enforcer (or from the apiserver's validation, on both sides alike).
//
// pss-compiled-LEVEL gets the same set compiled by `tollgate manifests
// --native`, enforced by the apiserver alone: each Pod, and a Deployment
// of it, must be decided there as tollgate's webhook decides it, with the
// webhook's message for the policy that denies.
func TestPodSecurityDifferential(t *testing.T) {
	ctx := context.Background()
	corpus := podSecurityCorpus(t)
	w := &warnings{}
	cfg := rest.CopyConfig(cluster.restConfig)
	cfg.WarningHandler = w
	client := kubernetes.NewForConfigOrDie(cfg)
	privileged := framework.Pod("probe-privileged", map[string]string{"environment": "dev"}, nil)
	privileged.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}

	for _, level := range []string{"baseline", "restricted"} {
		t.Run(level, func(t *testing.T) {
			native, through, compiled := "pss-native-"+level, "pss-tollgate-"+level, "pss-compiled-"+level
			if err := framework.EnsureNamespace(ctx, cluster.client, native, map[string]string{
				"pod-security.kubernetes.io/enforce": level, "pod-security.kubernetes.io/enforce-version": "latest",
			}); err != nil {
				t.Fatal(err)
			}
			if err := framework.EnsureNamespace(ctx, cluster.client, through, map[string]string{"pss-tollgate": level}); err != nil {
				t.Fatal(err)
			}
			if err := framework.EnsureNamespace(ctx, cluster.client, compiled, map[string]string{"pss-compiled": level}); err != nil {
				t.Fatal(err)
			}
			set, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "policies", "sets", "pod-security-"+level+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			// The set as shipped, confined to this test's namespace.
			selector := fmt.Sprintf("    podControllers: true\n    namespaceSelector: {matchLabels: {pss-tollgate: %s}}\n", level)
			docs := bytes.ReplaceAll(set, []byte("    podControllers: true\n"), []byte(selector))
			gone := func(ctx context.Context) error {
				_, err := cluster.client.CoreV1().Pods(through).Create(ctx, privileged.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}
			startTollgateWith(t, "tollgate-pss-"+level, gone, docs)
			compiledDocs := bytes.ReplaceAll(set, []byte("    podControllers: true\n"),
				[]byte(fmt.Sprintf("    podControllers: true\n    namespaceSelector: {matchLabels: {pss-compiled: %s}}\n", level)))
			compiledSet(t, compiledDocs, compiled, privileged, client, w)
			for _, ns := range []string{native, through} {
				deadline := time.Now().Add(30 * time.Second)
				for createIn(ctx, t, client, w, ns, privileged).allowed {
					if time.Now().After(deadline) {
						t.Fatalf("%s: Pod Security not in effect after 30s", ns)
					}
					time.Sleep(200 * time.Millisecond)
				}
			}

			counts := map[string]int{}
			for _, p := range corpus {
				n := createIn(ctx, t, client, w, native, p.obj)
				g := createIn(ctx, t, client, w, through, p.obj)
				nk, gk := podSecurityOutcome(n, "violates PodSecurity"), podSecurityOutcome(g, `admission webhook "`)
				counts[nk]++
				switch {
				case nk != gk:
					t.Errorf("%s: Kubernetes %s, tollgate %s\n native:   %s\n tollgate: %s", p.name, nk, gk, n.raw, g.raw)
				case nk == "invalid" && strings.ReplaceAll(n.message, native, through) != g.message:
					t.Errorf("%s: both invalid, with different messages\n native:   %s\n tollgate: %s", p.name, n.raw, g.raw)
				}
				if d := compiledAgrees(ctx, t, client, w, compiled, p.obj, p.name, g, gk); d != "" {
					t.Error(d)
				}
				dep := asDeployment(p.obj)
				gd := createIn(ctx, t, client, w, through, dep)
				gdk := podSecurityOutcome(gd, `admission webhook "`)
				counts["deployment "+gdk]++
				if d := compiledAgrees(ctx, t, client, w, compiled, dep, "deployment of "+p.name, gd, gdk); d != "" {
					t.Error(d)
				}
			}
			t.Logf("%d Pods: %d allowed, %d refused by Pod Security on both sides, %d invalid on both sides; their Deployments: %d allowed, %d refused, %d invalid",
				len(corpus), counts["allowed"], counts["refused"], counts["invalid"], counts["deployment allowed"], counts["deployment refused"], counts["deployment invalid"])
			if counts["allowed"] == 0 || counts["refused"] == 0 {
				t.Errorf("the corpus does not tell allow from deny at %s: %v", level, counts)
			}
		})
	}
}

// podSecurityOutcome classifies an answer: allowed, refused by the given
// enforcer, invalid (the apiserver's validation refused it before either
// enforcer), or anything else, spelled out.
func podSecurityOutcome(a answer, enforcer string) string {
	switch {
	case a.allowed:
		return "allowed"
	case strings.Contains(a.raw, enforcer):
		return "refused"
	case a.code == 422:
		return "invalid"
	default:
		return "other: " + a.raw
	}
}

type corpusPod struct {
	name string
	obj  *corev1.Pod
}

// podSecurityCorpus is the library's hand-written edge cases and the
// newest-version fixtures of k8s.io/pod-security-admission's own tests.
func podSecurityCorpus(t *testing.T) []corpusPod {
	t.Helper()
	var files []string
	edge, _ := filepath.Glob(filepath.Join(framework.RepoRoot(), "policies", "testdata", "pod-security", "*.yaml"))
	files = append(files, edge...)
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/pod-security-admission").Output()
	if err != nil {
		t.Fatalf("locate k8s.io/pod-security-admission: %v", err)
	}
	fixtures, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "test", "testdata", "*", "v1.37", "*", "*.yaml"))
	if len(fixtures) == 0 {
		t.Fatal("no pod-security-admission fixtures for v1.37")
	}
	files = append(files, fixtures...)
	var pods []corpusPod
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			var p corev1.Pod
			if err := yaml.UnmarshalStrict(doc, &p); err != nil {
				t.Fatalf("%s#%d: %v", f, i+1, err)
			}
			// Fixtures of both levels share names; the namespace tells nothing here.
			p.Name = fmt.Sprintf("c%d-%s", len(pods), p.Name)
			p.Namespace = ""
			// The suite's seed webhook asks every Pod for this label; Pod Security ignores labels.
			if p.Labels == nil {
				p.Labels = map[string]string{}
			}
			p.Labels["environment"] = "dev"
			pods = append(pods, corpusPod{name: fmt.Sprintf("%s#%d", filepath.Base(f), i+1), obj: &p})
		}
	}
	return pods
}
